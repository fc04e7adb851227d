#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
// System headers first, plain, as in CLibevent's shim, so every module sees one fd_set.
#include <sys/types.h>
#include <zlib.h>

// deflateInit2 is a macro (it passes ZLIB_VERSION and the stream size), so Swift cannot call it.
static inline int czlib_deflate_init_gzip(z_stream *stream, int level) {
    // windowBits 15 + 16 asks zlib for a gzip header and trailer instead of a zlib wrapper.
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}
#endif
