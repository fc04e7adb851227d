#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
// System headers first, plain, as in CLibevent's shim, so every module sees one fd_set.
#include <sys/types.h>
#include <sys/socket.h>
#include <curl/curl.h>

// curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are variadic, which Swift cannot
// call. Each wrapper below fixes the type of the one argument an option takes; the option's
// documentation says which type that is (long, pointer, curl_off_t or a callback).

static inline CURLcode ccurl_easy_set_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode ccurl_easy_set_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode ccurl_easy_set_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode ccurl_easy_set_offset(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode ccurl_easy_set_headers(CURL *easy, struct curl_slist *list) {
    return curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list);
}

static inline CURLcode ccurl_easy_set_write_function(CURL *easy, curl_write_callback function) {
    return curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, function);
}

static inline CURLcode ccurl_easy_set_xferinfo_function(CURL *easy, curl_xferinfo_callback function) {
    return curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, function);
}

static inline CURLcode ccurl_easy_get_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLcode ccurl_easy_get_string(CURL *easy, CURLINFO info, char **value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLcode ccurl_easy_get_pointer(CURL *easy, CURLINFO info, void **value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLMcode ccurl_multi_set_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLMcode ccurl_multi_set_socket_function(CURLM *multi, curl_socket_callback function, void *data) {
    CURLMcode code = curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, function);
    return code != CURLM_OK ? code : curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, data);
}

static inline CURLMcode ccurl_multi_set_timer_function(CURLM *multi, curl_multi_timer_callback function, void *data) {
    CURLMcode code = curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, function);
    return code != CURLM_OK ? code : curl_multi_setopt(multi, CURLMOPT_TIMERDATA, data);
}

// CURLMsg's `data` is a union; Swift reads its `result` member awkwardly, so this does.
static inline CURLcode ccurl_message_result(const CURLMsg *message) {
    return message->data.result;
}
#endif
