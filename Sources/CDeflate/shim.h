#ifndef CDEFLATE_SHIM_H
#define CDEFLATE_SHIM_H
// libdeflate compresses a whole buffer in one call, into a buffer the caller sizes with its
// bound: no stream state, no output chunks, and about three times zlib's speed at the same level.
// Its header needs nothing of this shim; it is here so that every C library has one.
#include <stddef.h>
#include <libdeflate.h>
#endif
