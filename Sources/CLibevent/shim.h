#ifndef CLIBEVENT_SHIM_H
#define CLIBEVENT_SHIM_H
// Debian's <event2/event-config.h> defines _GNU_SOURCE. If glibc's <features.h> were first parsed
// after that, fd_set would be declared differently than in SwiftGlibc/Dispatch, and clang refuses
// to merge the modules (intermittently, depending on build order). So: system headers first.
#include <sys/types.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <event2/util.h>

// glibc declares accept4 only under _GNU_SOURCE, which must not be defined here (see above).
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
#endif
