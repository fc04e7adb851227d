#ifndef CVIPS_SHIM_H
#define CVIPS_SHIM_H
#include <stddef.h>

// The declarations libvips's headers would give, written out: those headers include glib's,
// which need include paths that only pkg-config knows, and SwiftPM refuses the -pthread flag
// that `pkg-config vips` adds (as with hiredis, the target has no pkgConfig). Each prototype is
// copied from libvips 8.14's and glib 2.74's headers (Debian 12), which keep them stable.
typedef struct _VipsImage VipsImage;
int vips_init(const char *argv0);
const char *vips_error_buffer(void);
void vips_error_clear(void);
void vips_cache_set_max(int max);
int vips_image_get_width(const VipsImage *image);
int vips_image_get_height(const VipsImage *image);
int vips_image_get_bands(const VipsImage *image);
void g_object_unref(void *object);
void *g_object_ref(void *object);
void g_free(void *memory);
int vips_sines(VipsImage **out, int width, int height, ...);
int vips_gaussnoise(VipsImage **out, int width, int height, ...);
int vips_linear1(VipsImage *in, VipsImage **out, double a, double b, ...);
int vips_add(VipsImage *left, VipsImage *right, VipsImage **out, ...);
int vips_multiply(VipsImage *left, VipsImage *right, VipsImage **out, ...);
int vips_cast_uchar(VipsImage *in, VipsImage **out, ...);
int vips_resize(VipsImage *in, VipsImage **out, double scale, ...);
void vips_concurrency_set(int concurrency);
int vips_bandjoin(VipsImage **in, VipsImage **out, int n, ...);
int vips_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
int vips_pngsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
int vips_webpsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
VipsImage *vips_image_new_from_buffer(const void *buf, size_t len, const char *option_string, ...);
VipsImage *vips_image_copy_memory(VipsImage *image);
int vips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height, ...);
int vips_rot(VipsImage *in, VipsImage **out, int angle, ...);
int vips_flip(VipsImage *in, VipsImage **out, int direction, ...);
int vips_colourspace(VipsImage *in, VipsImage **out, int space, ...);
int vips_image_guess_interpretation(const VipsImage *image);
int vips_image_hasalpha(VipsImage *image);
int vips_moreeq_const1(VipsImage *left, VipsImage **out, double c, ...);
typedef struct _VipsArrayDouble VipsArrayDouble;
VipsArrayDouble *vips_array_double_newv(int n, ...);
void vips_area_unref(void *area);
int vips_flatten(VipsImage *in, VipsImage **out, ...);
int vips_tiffsave_buffer(VipsImage *in, void **buf, size_t *len, ...);
int vips_image_get_n_pages(VipsImage *image);
int vips_avg(VipsImage *in, double *out, ...);
// glibc's allocator, which libvips's pixel buffers come from (Swift's Glibc module leaves out
// <malloc.h>). glibc raises its mmap threshold to the largest mapped block freed (up to 32 MiB);
// after one large picture, buffers of that size come from malloc's arenas, whose pages stay in
// the process. A fixed threshold keeps larger blocks mapped and unmapped when freed.
#include <malloc.h>
static inline int cvips_map_blocks_from(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }
// The enum values the wrappers pass (VipsForeignTiffCompression, VipsAccess).
enum { CVIPS_TIFF_COMPRESSION_JPEG = 1, CVIPS_ACCESS_RANDOM = 0 };

// libvips's operations are variadic (optional arguments as name/value pairs ending in NULL),
// which Swift cannot call. Each wrapper below fixes the optional arguments one use needs and
// adds the NULL; each returns libvips's 0 on success, -1 on failure (vips_error_buffer says why).
// Images are GObjects: the caller unrefs every image an operation hands back.

// Fixture art (met-fixture-server): sine patterns with noise, joined into three bands.

static inline int cvips_sines(VipsImage **out, int width, int height, double hfreq, double vfreq) {
    return vips_sines(out, width, height, "hfreq", hfreq, "vfreq", vfreq, NULL);
}

static inline int cvips_gaussnoise(VipsImage **out, int width, int height, double sigma, int seed) {
    return vips_gaussnoise(out, width, height, "mean", 0.0, "sigma", sigma, "seed", seed, NULL);
}

static inline int cvips_linear1(VipsImage *in, VipsImage **out, double scale, double offset) {
    return vips_linear1(in, out, scale, offset, NULL);
}

static inline int cvips_add(VipsImage *left, VipsImage *right, VipsImage **out) {
    return vips_add(left, right, out, NULL);
}

static inline int cvips_multiply(VipsImage *left, VipsImage *right, VipsImage **out) {
    return vips_multiply(left, right, out, NULL);
}

static inline int cvips_resize(VipsImage *in, VipsImage **out, double horizontal, double vertical) {
    return vips_resize(in, out, horizontal, "vscale", vertical, NULL);
}

static inline int cvips_cast_uchar(VipsImage *in, VipsImage **out) {
    return vips_cast_uchar(in, out, NULL);
}

static inline int cvips_bandjoin3(VipsImage *first, VipsImage *second, VipsImage *third, VipsImage **out) {
    VipsImage *bands[3] = {first, second, third};
    return vips_bandjoin(bands, out, 3, NULL);
}

// Reading the image host's files and deriving pictures from them (the IIIF Image API).

// Decodes a whole file into memory, so that `buffer` may be freed once this returns. `shrink`
// (1, 2, 4 or 8) is JPEG's shrink-on-load, which decodes at that fraction of the size for a
// fraction of the work; other formats are decoded whole (pass 1). A truncated file fails
// (VIPS_FAIL_ON_TRUNCATED). NULL on failure.
static inline VipsImage *cvips_decode(const void *buffer, size_t length, int shrink) {
    VipsImage *lazy = shrink > 1
        ? vips_image_new_from_buffer(buffer, length, "", "shrink", shrink, "fail_on", 1, NULL)
        : vips_image_new_from_buffer(buffer, length, "", "fail_on", 1, NULL);
    if (lazy == NULL) return NULL;
    VipsImage *decoded = vips_image_copy_memory(lazy);
    g_object_unref(lazy);
    return decoded;
}

// A picture's pyramid, for deep zoom: a tiled TIFF whose first page is `in` and each further page
// half the one before (libvips's own halving, rounded) down to one tile; tiles of `side` px,
// JPEG-compressed at `quality`. Written once per picture, read back by `cvips_decode_region`.
static inline int cvips_pyramid_buffer(VipsImage *in, void **buffer, size_t *length, int side, int quality) {
    return vips_tiffsave_buffer(in, buffer, length, "tile", 1, "tile_width", side, "tile_height", side,
        "pyramid", 1, "compression", CVIPS_TIFF_COMPRESSION_JPEG, "Q", quality, "strip", 1, NULL);
}

// The size of page `page` of a file (a pyramid's level) and how many pages it has, from its
// header alone. -1 on failure.
static inline int cvips_page_size(const void *buffer, size_t length, int page, int *width, int *height, int *pages) {
    VipsImage *lazy = vips_image_new_from_buffer(buffer, length, "", "page", page, "fail_on", 1, NULL);
    if (lazy == NULL) return -1;
    *width = vips_image_get_width(lazy);
    *height = vips_image_get_height(lazy);
    *pages = vips_image_get_n_pages(lazy);
    g_object_unref(lazy);
    return 0;
}

// The pixels of `left`, `top`, `width` × `height` (within the page) of page `page` (a pyramid's
// level), decoded into memory: only the tiles the region touches are read, and `buffer` may be
// freed once this returns. NULL on failure.
static inline VipsImage *cvips_decode_region(
    const void *buffer, size_t length, int page, int left, int top, int width, int height
) {
    VipsImage *lazy = vips_image_new_from_buffer(
        buffer, length, "", "page", page, "access", CVIPS_ACCESS_RANDOM, "fail_on", 1, NULL);
    if (lazy == NULL) return NULL;
    VipsImage *region = NULL;
    int failed = vips_extract_area(lazy, &region, left, top, width, height, NULL);
    g_object_unref(lazy);
    if (failed) return NULL;
    VipsImage *decoded = vips_image_copy_memory(region);
    g_object_unref(region);
    return decoded;
}

static inline int cvips_extract_area(VipsImage *in, VipsImage **out, int left, int top, int width, int height) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

// `quarters`: 1, 2 or 3 quarter turns clockwise (libvips's VIPS_ANGLE_D90, D180, D270).
static inline int cvips_rot(VipsImage *in, VipsImage **out, int quarters) {
    return vips_rot(in, out, quarters, NULL);
}

// Left for right (VIPS_DIRECTION_HORIZONTAL).
static inline int cvips_flip_horizontal(VipsImage *in, VipsImage **out) {
    return vips_flip(in, out, 0, NULL);
}

// 8-bit sRGB, or 8-bit grey for an image that is grey: alpha is flattened onto white, and other
// colour spaces (CMYK, 16-bit, Lab, ...) are converted. What JPEG, PNG and WebP take.
static inline int cvips_to_srgb(VipsImage *in, VipsImage **out) {
    enum { B_W = 1, GREY16 = 26, sRGB = 22 };
    VipsImage *opaque = in;
    g_object_ref(in);
    if (vips_image_hasalpha(in)) {
        VipsArrayDouble *white = vips_array_double_newv(1, 255.0);
        int failed = vips_flatten(in, &opaque, "background", white, NULL);
        vips_area_unref(white);
        g_object_unref(in);
        if (failed) return -1;
    }
    int interpretation = vips_image_guess_interpretation(opaque);
    int space = interpretation == B_W || interpretation == GREY16 ? B_W : sRGB;
    int failed = vips_colourspace(opaque, out, space, NULL);
    g_object_unref(opaque);
    return failed;
}

// One band of grey (VIPS_INTERPRETATION_B_W).
static inline int cvips_to_grey(VipsImage *in, VipsImage **out) {
    return vips_colourspace(in, out, 1, NULL);
}

// 255 where `in` is at least `threshold`, else 0.
static inline int cvips_threshold(VipsImage *in, VipsImage **out, double threshold) {
    return vips_moreeq_const1(in, out, threshold, NULL);
}

// The mean of every pixel of every band.
static inline int cvips_avg(VipsImage *in, double *out) {
    return vips_avg(in, out, NULL);
}

// Encoders, to a buffer the caller frees with g_free. Metadata is stripped: the bytes depend on
// the pixels and the settings only.

static inline int cvips_jpegsave_buffer(VipsImage *in, void **buffer, size_t *length, int quality) {
    return vips_jpegsave_buffer(in, buffer, length, "Q", quality, "strip", 1, NULL);
}

static inline int cvips_pngsave_buffer(VipsImage *in, void **buffer, size_t *length) {
    return vips_pngsave_buffer(in, buffer, length, "strip", 1, NULL);
}

static inline int cvips_webpsave_buffer(VipsImage *in, void **buffer, size_t *length, int quality) {
    return vips_webpsave_buffer(in, buffer, length, "Q", quality, "strip", 1, NULL);
}

#endif
