#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
// OpenSSL's libcrypto (3.0, Debian's libssl-dev), for one thing: HMAC-SHA256, the MAC that signs
// what the instances of a group write to Redis. libcurl already loads libcrypto at run time for
// TLS; SHA-256 there uses the CPU's instructions for it. The parameters that choose the digest are
// an OSSL_PARAM array, which Swift cannot build, hence these two functions.
#include <stddef.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

// A MAC context keyed with `key` (`length` bytes) for HMAC-SHA256, to be copied for each message
// (`ccrypto_hmac_sha256`) and never used directly; free it with EVP_MAC_CTX_free. NULL on failure.
static inline EVP_MAC_CTX *ccrypto_hmac_sha256_keyed(const void *key, size_t length) {
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (mac == NULL) return NULL;
    EVP_MAC_CTX *context = EVP_MAC_CTX_new(mac);
    EVP_MAC_free(mac);  // the context holds its own reference
    if (context == NULL) return NULL;
    char digest[] = "SHA256";
    OSSL_PARAM parameters[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end(),
    };
    if (EVP_MAC_init(context, (const unsigned char *)key, length, parameters) != 1) {
        EVP_MAC_CTX_free(context);
        return NULL;
    }
    return context;
}

// Writes the HMAC-SHA256 of the `count` parts (`parts[i]`, `lengths[i]` bytes each, as one
// message) into `tag` (32 bytes), from a copy of `keyed`, which stays as it was: any number of
// threads may share `keyed`. 1 on success, 0 on failure.
static inline int ccrypto_hmac_sha256(const EVP_MAC_CTX *keyed, const void *const *parts, const size_t *lengths,
                                      size_t count, unsigned char tag[32]) {
    EVP_MAC_CTX *context = EVP_MAC_CTX_dup(keyed);
    if (context == NULL) return 0;
    int ok = 1;
    for (size_t index = 0; ok && index < count; index++) {
        ok = EVP_MAC_update(context, (const unsigned char *)parts[index], lengths[index]) == 1;
    }
    size_t written = 0;
    ok = ok && EVP_MAC_final(context, tag, &written, 32) == 1 && written == 32;
    EVP_MAC_CTX_free(context);
    return ok;
}
#endif
