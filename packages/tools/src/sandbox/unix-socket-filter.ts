/**
 * A seccomp program (classic BPF, as bubblewrap's `--seccomp FD` takes it) that refuses
 * `socket(AF_UNIX, …)` and `io_uring_setup` with EPERM and allows every other system call (R-S9).
 *
 * Why, in every sandbox: a host socket file is reachable across network namespaces, and the
 * sandbox can cover with /dev/null only those whose path it can find; the kernel lists a socket
 * renamed after bind under its old name and one bound by a relative name without its directory
 * (/proc/net/unix), and a socket in another mount namespace (a container's) not at all. With the
 * network shared (`network: true`) the host's whole abstract namespace (`@/tmp/.X11-unix/X0`,
 * dbus, containerd shims) would be reachable too. seccomp cannot read the address `connect()` is
 * given, but it can refuse to create the socket at all; io_uring is refused too because its socket
 * and connect operations do not pass through the system-call filter. The price: nothing inside the
 * sandbox can use unix sockets (a daemon that listens on one — nx's, a test's own server — fails
 * with EPERM; Claude Code's Linux sandbox refuses them by default too); `socketpair` still works,
 * so pipes to children, Node's IPC and worker pools do. Calls of another ABI (32-bit `int 0x80`,
 * x32) are refused outright, since their numbers differ and `socketcall` would slip past.
 */

/** `AUDIT_ARCH_*` and the numbers of the two calls, per Node architecture this filter knows. */
const ARCHITECTURES: Readonly<Record<string, { audit: number; socket: number; ioUringSetup: number }>> = {
  x64: { audit: 0xc000003e, socket: 41, ioUringSetup: 425 },
  arm64: { audit: 0xc00000b7, socket: 198, ioUringSetup: 425 },
};

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const AF_UNIX = 1;
/** x32 system calls have this bit set in their number (on x86-64 only; harmless elsewhere). */
const X32_SYSCALL_BIT = 0x40000000;
/** `struct seccomp_data`: nr at 0, arch at 4, args[0] at 16 (its low 32 bits: little-endian hosts). */
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0 = 16;

/** The program for this machine, or undefined when its architecture is not one the filter knows. */
export function unixSocketFilter(arch: string = process.arch): Buffer | undefined {
  const known = ARCHITECTURES[arch];
  if (known === undefined) return undefined;
  // [code, jump-if-true, jump-if-false, k]; jumps count instructions after the next one.
  const program: readonly (readonly [number, number, number, number])[] = [
    /* 0 */ [BPF_LD_W_ABS, 0, 0, OFFSET_ARCH],
    /* 1 */ [BPF_JEQ_K, 0, 7, known.audit], // another ABI → 9
    /* 2 */ [BPF_LD_W_ABS, 0, 0, OFFSET_NR],
    /* 3 */ [BPF_JGE_K, 5, 0, X32_SYSCALL_BIT], // x32 → 9
    /* 4 */ [BPF_JEQ_K, 4, 0, known.ioUringSetup], // → 9
    /* 5 */ [BPF_JEQ_K, 0, 2, known.socket], // not socket() → 8
    /* 6 */ [BPF_LD_W_ABS, 0, 0, OFFSET_ARG0],
    /* 7 */ [BPF_JEQ_K, 1, 0, AF_UNIX], // AF_UNIX → 9
    /* 8 */ [BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW],
    /* 9 */ [BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM],
  ];
  const buffer = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], index) => {
    buffer.writeUInt16LE(code, index * 8);
    buffer.writeUInt8(jt, index * 8 + 2);
    buffer.writeUInt8(jf, index * 8 + 3);
    buffer.writeUInt32LE(k, index * 8 + 4);
  });
  return buffer;
}
