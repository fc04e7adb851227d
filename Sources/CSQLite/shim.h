#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
// System headers first, plain, as in CLibevent's shim, so every module sees one fd_set.
#include <sys/types.h>
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import. Binding
// with it makes SQLite copy the bytes at once, so the caller's buffer may go away after the call.
static inline int csqlite_bind_blob_copy(sqlite3_stmt *statement, int index, const void *bytes, int count) {
    return sqlite3_bind_blob(statement, index, bytes, count, SQLITE_TRANSIENT);
}

static inline int csqlite_bind_text_copy(sqlite3_stmt *statement, int index, const char *text, int count) {
    return sqlite3_bind_text(statement, index, text, count, SQLITE_TRANSIENT);
}
#endif
