import { Piscina } from "piscina";
const file = process.argv[2], delay = Number(process.argv[3]), flag = process.argv[4] === "noreq";
const p = new Piscina({ filename: file, minThreads: 1, maxThreads: 1, atomics: "disabled", execArgv: flag ? ["--no-experimental-require-module"] : [] });
p.on("error", (e) => console.log("pool error", e.message));
await new Promise((r) => setTimeout(r, delay));
await p.destroy();
console.log("ok");
