/*
 * dgram.h - a bound Unix datagram socket with a deep receive queue.
 *
 * Linux lets at most net.unix.max_dgram_qlen datagrams (10 by default) wait on a Unix
 * datagram socket, whatever its buffer size; the limit is taken from the sysctl when the
 * socket is created. A node's ranks finish a step together, so eight or more reports arrive
 * at once and the tenth would be refused (EAGAIN, dropped by the non-blocking client). When
 * the process may write the sysctl (root), hn_dgram_bind() raises it just for the socket's
 * creation and puts the old value back; otherwise it keeps the system's value and says so.
 */
#ifndef HN_DGRAM_H
#define HN_DGRAM_H

/* Creates a non-blocking, close-on-exec Unix datagram socket with a queue of at least qlen
 * datagrams if it can, and binds it to path (which must not exist). SO_PASSCRED is on from
 * before the bind, so every datagram comes with its sender's credentials (SCM_CREDENTIALS,
 * unix(7)). Returns the fd or a negative errno; *got_qlen is the queue length the socket has
 * (0 when unknown). */
int hn_dgram_bind(const char *path, unsigned qlen, unsigned *got_qlen);

/* The sysctl's file, for tests. */
#define HN_DGRAM_QLEN_SYSCTL "/proc/sys/net/unix/max_dgram_qlen"

#endif
