#ifndef CHIREDIS_SHIM_H
#define CHIREDIS_SHIM_H
// System headers first, plain, as in CLibevent's shim, so every module sees one fd_set.
#include <sys/types.h>
#include <sys/time.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <hiredis/async.h>
// The adapter that lets hiredis's async API run on a libevent loop: it adds and removes the
// connection's read and write events as hiredis asks (static functions, compiled in here).
#include <hiredis/adapters/libevent.h>

// The adapter's one entry point, under a name of ours: attaches `context` to `base`, whose thread
// must then be the only one that touches the context.
static inline int chiredis_attach(redisAsyncContext *context, struct event_base *base) {
    return redisLibeventAttach(context, base);
}
#endif
