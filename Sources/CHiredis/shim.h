#ifndef CHIREDIS_SHIM_H
#define CHIREDIS_SHIM_H
// System headers first, plain, as in CLibevent's shim, so every module sees one fd_set.
#include <sys/types.h>
#include <sys/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <hiredis/async.h>

// What lets hiredis's async API run on a libevent loop: hiredis's own libevent adapter
// (hiredis/adapters/libevent.h) with one change, a bound on the memory one reply may take, which
// hiredis 0.14 has no setting for. It keeps a reply's bytes until the whole reply has arrived,
// however large its length says it is, and makes an object per element of an array however many
// its header announces, so a hostile or broken Redis could make this process hold any amount of
// memory. Here a connection whose unparsed bytes exceed the bound is dropped before more is read
// (so at most the bound plus one read of 16 KiB is ever buffered), and the reply objects a reply
// is made of are charged against the bound as the reader makes them (its data, and a pointer and
// an object per element): past it the reader fails ("Out of memory", hiredis's word for a
// failed object) and the connection drops.

// The connection's read and write events, the bound, and what the reply being read has cost.
typedef struct chiredis_events {
    redisAsyncContext *context;
    struct event *read;
    struct event *write;
    size_t reply_limit;
    size_t reply_cost;
    // hiredis's own reply functions, which do the work once a reply object is paid for.
    redisReplyObjectFunctions *made_by;
} chiredis_events;

// Charges `bytes` to the reply `task` belongs to (a task without a parent begins a new reply);
// false past the bound.
static int chiredis_charge(const redisReadTask *task, size_t bytes) {
    chiredis_events *events = (chiredis_events *)task->privdata;
    if (task->parent == NULL) events->reply_cost = 0;
    events->reply_cost += bytes;
    return events->reply_cost <= events->reply_limit;
}

static void *chiredis_string(const redisReadTask *task, char *text, size_t length) {
    if (!chiredis_charge(task, length + sizeof(redisReply))) return NULL;
    return ((chiredis_events *)task->privdata)->made_by->createString(task, text, length);
}

static void *chiredis_array(const redisReadTask *task, int elements) {
    size_t slots = elements > 0 ? (size_t)elements : 0;
    if (!chiredis_charge(task, sizeof(redisReply) + slots * sizeof(redisReply *))) return NULL;
    return ((chiredis_events *)task->privdata)->made_by->createArray(task, elements);
}

static void *chiredis_integer(const redisReadTask *task, long long value) {
    if (!chiredis_charge(task, sizeof(redisReply))) return NULL;
    return ((chiredis_events *)task->privdata)->made_by->createInteger(task, value);
}

static void *chiredis_nil(const redisReadTask *task) {
    if (!chiredis_charge(task, sizeof(redisReply))) return NULL;
    return ((chiredis_events *)task->privdata)->made_by->createNil(task);
}

// Frees with hiredis's own function, which made the object (the free function takes no task, so
// it reaches hiredis's through the default table every reader starts with).
static void chiredis_free(void *reply) { freeReplyObject(reply); }

// The reply functions of every connection: the charging ones above.
static redisReplyObjectFunctions chiredis_functions = {
    chiredis_string, chiredis_array, chiredis_integer, chiredis_nil, chiredis_free,
};

static void chiredis_readable(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    chiredis_events *events = (chiredis_events *)arg;
    redisAsyncContext *context = events->context;
    redisReader *reader = context->c.reader;
    if (reader != NULL && reader->len - reader->pos > events->reply_limit) {
        // Freeing the context tells its disconnect callback, with this error, and frees `events`.
        context->c.err = REDIS_ERR_OTHER;
        snprintf(context->c.errstr, sizeof(context->c.errstr), "a reply larger than %zu bytes",
                 events->reply_limit);
        context->err = context->c.err;
        context->errstr = context->c.errstr;
        redisAsyncFree(context);
        return;
    }
    redisAsyncHandleRead(context);
}

static void chiredis_writable(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    redisAsyncHandleWrite(((chiredis_events *)arg)->context);
}

static void chiredis_add_read(void *data) { event_add(((chiredis_events *)data)->read, NULL); }
static void chiredis_del_read(void *data) { event_del(((chiredis_events *)data)->read); }
static void chiredis_add_write(void *data) { event_add(((chiredis_events *)data)->write, NULL); }
static void chiredis_del_write(void *data) { event_del(((chiredis_events *)data)->write); }

static void chiredis_cleanup(void *data) {
    chiredis_events *events = (chiredis_events *)data;
    event_free(events->read);
    event_free(events->write);
    free(events);
}

// Attaches `context` to `base`, whose thread must then be the only one that touches the context;
// a connection with more than `reply_limit` bytes of a reply unread is dropped (see above).
// REDIS_ERR when something is attached already or memory runs out.
static inline int chiredis_attach(redisAsyncContext *context, struct event_base *base, size_t reply_limit) {
    if (context->ev.data != NULL) return REDIS_ERR;
    chiredis_events *events = (chiredis_events *)calloc(1, sizeof(chiredis_events));
    if (events == NULL) return REDIS_ERR;
    events->context = context;
    events->reply_limit = reply_limit;
    redisReader *reader = context->c.reader;
    if (reader == NULL || reader->fn == NULL) {
        free(events);
        return REDIS_ERR;
    }
    events->made_by = reader->fn;
    events->read = event_new(base, context->c.fd, EV_READ, chiredis_readable, events);
    events->write = event_new(base, context->c.fd, EV_WRITE, chiredis_writable, events);
    if (events->read == NULL || events->write == NULL) {
        if (events->read != NULL) event_free(events->read);
        if (events->write != NULL) event_free(events->write);
        free(events);
        return REDIS_ERR;
    }
    context->ev.addRead = chiredis_add_read;
    context->ev.delRead = chiredis_del_read;
    context->ev.addWrite = chiredis_add_write;
    context->ev.delWrite = chiredis_del_write;
    context->ev.cleanup = chiredis_cleanup;
    context->ev.data = events;
    reader->fn = &chiredis_functions;
    reader->privdata = events;
    event_add(events->read, NULL);
    event_add(events->write, NULL);
    return REDIS_OK;
}
#endif
