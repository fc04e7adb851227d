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
