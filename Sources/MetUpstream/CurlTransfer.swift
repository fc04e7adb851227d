import CCurl
import Foundation
import MetEngine
import MetGzip

/// One upstream request in flight on the curl thread: its easy handle, the body received so
/// far, and the callback that gets the outcome exactly once.
///
/// Curl thread only. Owned by `CurlMulti`'s table from `start` until `finish`; curl's callbacks
/// reach it through the unretained pointer set as the handle's private, write and progress data.
/// The easy handle is lent by `CurlMulti`, which takes it back once the transfer is removed from
/// the multi (see `CurlMulti.recycle`); a transfer that could not be set up frees it.
final class CurlTransfer {
    /// What every transfer shares: set once by `CurlUpstream`, read on the curl thread.
    struct Settings {
        /// Milliseconds to connect (TCP and TLS).
        var connectTimeoutMilliseconds: Int
        /// Milliseconds for the whole attempt, body included.
        var totalTimeoutMilliseconds: Int
        /// The most body bytes accepted, on the wire and after decoding.
        var maxBodyBytes: Int
        /// Seconds a transfer may go on at less than 1 KiB a second before it times out; nil for
        /// no such bound (an upstream call's total timeout is short anyway).
        var stallSeconds: Int? = nil
    }

    /// The request's header lines: the list every transfer shares (owned by `CurlMulti`), or a
    /// list of this transfer's own, freed with it.
    enum Headers {
        case shared(UnsafeMutablePointer<curl_slist>)
        case own([String])
    }

    /// Where a 200's body goes.
    enum Sink {
        /// Kept in memory, the reply's body (every upstream call).
        case memory
        /// Written to this open file (a download, `CurlDownload`) as it comes; the reply's body is
        /// then empty. Another status's body is still kept in memory, its first `errorBodyBytes`
        /// (the transfer ends there), so that its message can be read.
        case file(Int32)
    }

    /// What a file transfer keeps of a body that is not a 200's.
    static let errorBodyBytes = 65_536

    /// Asks for gzip as a plain header line, with curl's decoding off: the write callback sees
    /// the bytes on the wire, `decoded` inflates them, and they serve as the kept gzip copy.
    /// Through `CURLOPT_ACCEPT_ENCODING` instead, curl made a zlib stream for every transfer (its
    /// 40 KiB of state, 0.7 % of a fill's CPU) that it never used.
    static let acceptEncoding = "Accept-Encoding: gzip"

    let id: UInt64
    let easy: UnsafeMutableRawPointer
    /// The header list this transfer made for itself, freed in `complete`; nil when it uses the
    /// shared one.
    private var ownHeaders: UnsafeMutablePointer<curl_slist>?
    private let deliver: @Sendable (Result<UpstreamReply, UpstreamError>) -> Void
    private let maxBodyBytes: Int
    private var body: [UInt8] = []
    private let sink: Sink
    /// A file transfer's status, read when its first body bytes come; the bytes it wrote.
    private var fileStatus: Int?
    private var written = 0
    /// Set when a file transfer's other status had sent `errorBodyBytes`: the transfer was ended
    /// there, and answers with what it kept.
    private var errorBodyCut = false
    /// Why a file transfer could not take its body (the file's `strerror`, or a coding it was
    /// sent in): it was then aborted.
    private var writeFailure: UpstreamError?
    /// Set when the body passed `maxBodyBytes`: the callbacks then abort the transfer.
    private var tooLarge = false
    /// curl's own words about a failure (CURLOPT_ERRORBUFFER), for the log.
    private let errorText: UnsafeMutablePointer<CChar>

    /// Sets every option of `easy` for `GET url`, or returns nil (after freeing `easy` and calling
    /// `deliver` with `.unreachable`) when there is no handle or curl refuses an option. Every
    /// option is set for each transfer, so a handle used before carries nothing of its last one.
    ///
    /// - Parameters:
    ///   - easy: a new handle, or one a finished transfer left (`CurlMulti.recycle`); nil when
    ///     `curl_easy_init` failed.
    ///   - headers: the request's header lines; a shared list is owned by the caller and alive as
    ///     long as any transfer.
    static func make(
        id: UInt64, easy: UnsafeMutableRawPointer?, url: String, settings: Settings, headers: Headers,
        sink: Sink = .memory, deliver: @escaping @Sendable (Result<UpstreamReply, UpstreamError>) -> Void
    ) -> CurlTransfer? {
        guard let easy else {
            deliver(.failure(.unreachable("curl_easy_init failed")))
            return nil
        }
        let transfer = CurlTransfer(id: id, easy: easy, settings: settings, sink: sink, deliver: deliver)
        let list: UnsafeMutablePointer<curl_slist>?
        switch headers {
        case .shared(let shared):
            list = shared
        case .own(let lines):
            for line in lines { transfer.ownHeaders = curl_slist_append(transfer.ownHeaders, line) }
            list = transfer.ownHeaders
        }
        guard let list else {
            curl_easy_cleanup(easy)
            transfer.complete(.failure(.unreachable("curl_slist_append failed")))
            return nil
        }
        if let failure = transfer.configure(url: url, settings: settings, headers: list) {
            curl_easy_cleanup(easy)
            transfer.complete(.failure(.unreachable("curl refused \(failure)")))
            return nil
        }
        return transfer
    }

    private init(
        id: UInt64, easy: UnsafeMutableRawPointer, settings: Settings, sink: Sink,
        deliver: @escaping @Sendable (Result<UpstreamReply, UpstreamError>) -> Void
    ) {
        self.id = id
        self.easy = easy
        self.sink = sink
        self.deliver = deliver
        maxBodyBytes = settings.maxBodyBytes
        errorText = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorText.initialize(to: 0)
    }

    /// Sets the handle's options; returns the name of the first one curl refused, or nil. Each is
    /// set straight (an array of closures, one per option, cost 19 allocations per transfer).
    private func configure(url: String, settings: Settings, headers: UnsafeMutablePointer<curl_slist>) -> String? {
        let context = Unmanaged.passUnretained(self).toOpaque()
        var refused: String?
        func set(_ name: StaticString, _ code: CURLcode) {
            if refused == nil, code != CURLE_OK { refused = "\(name)" }
        }
        set("CURLOPT_URL", ccurl_easy_set_string(easy, CURLOPT_URL, url))
        // Only plain HTTP(S): no file://, no other scheme through a redirect or a typo.
        set("CURLOPT_PROTOCOLS_STR", ccurl_easy_set_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        set("CURLOPT_HTTP_VERSION", ccurl_easy_set_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1))
        set("CURLOPT_HTTPHEADER", ccurl_easy_set_headers(easy, headers))
        set("CURLOPT_USERAGENT", ccurl_easy_set_string(easy, CURLOPT_USERAGENT, CurlUpstream.userAgent))
        // curl leaves a body as it came (see `acceptEncoding`).
        set("CURLOPT_HTTP_CONTENT_DECODING", ccurl_easy_set_long(easy, CURLOPT_HTTP_CONTENT_DECODING, 0))
        // Threads: no signals for timeouts (curl's threaded resolver needs none).
        set("CURLOPT_NOSIGNAL", ccurl_easy_set_long(easy, CURLOPT_NOSIGNAL, 1))
        set("CURLOPT_FOLLOWLOCATION", ccurl_easy_set_long(easy, CURLOPT_FOLLOWLOCATION, 0))
        set(
            "CURLOPT_CONNECTTIMEOUT_MS",
            ccurl_easy_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, settings.connectTimeoutMilliseconds))
        set("CURLOPT_TIMEOUT_MS", ccurl_easy_set_long(easy, CURLOPT_TIMEOUT_MS, settings.totalTimeoutMilliseconds))
        set(
            "CURLOPT_LOW_SPEED_LIMIT",
            ccurl_easy_set_long(easy, CURLOPT_LOW_SPEED_LIMIT, settings.stallSeconds == nil ? 0 : 1_024))
        set("CURLOPT_LOW_SPEED_TIME", ccurl_easy_set_long(easy, CURLOPT_LOW_SPEED_TIME, settings.stallSeconds ?? 0))
        // Refuses at once an answer whose Content-Length is already too large.
        set(
            "CURLOPT_MAXFILESIZE_LARGE",
            ccurl_easy_set_offset(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(settings.maxBodyBytes)))
        set("CURLOPT_ERRORBUFFER", ccurl_easy_set_pointer(easy, CURLOPT_ERRORBUFFER, errorText))
        set("CURLOPT_PRIVATE", ccurl_easy_set_pointer(easy, CURLOPT_PRIVATE, context))
        set("CURLOPT_WRITEFUNCTION", ccurl_easy_set_write_function(easy, CurlTransfer.receive))
        set("CURLOPT_WRITEDATA", ccurl_easy_set_pointer(easy, CURLOPT_WRITEDATA, context))
        // The progress callback counts bytes on the wire, before decoding (a chunked or gzip
        // body announces no length, so only counting can bound it).
        set("CURLOPT_NOPROGRESS", ccurl_easy_set_long(easy, CURLOPT_NOPROGRESS, 0))
        set("CURLOPT_XFERINFOFUNCTION", ccurl_easy_set_xferinfo_function(easy, CurlTransfer.progress))
        set("CURLOPT_XFERINFODATA", ccurl_easy_set_pointer(easy, CURLOPT_XFERINFODATA, context))
        return refused
    }

    /// curl's write callback: appends the body's bytes as they came (gzip stays gzip), or writes
    /// them to the sink's file; aborts (by taking fewer bytes than offered) once the body would
    /// pass the limit, or the file cannot take them.
    private static let receive: curl_write_callback = { data, size, count, context in
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
        let length = size * count
        if case .file(let descriptor) = transfer.sink {
            return transfer.receive(
                UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : length), into: descriptor)
        }
        guard transfer.body.count + length <= transfer.maxBodyBytes else {
            transfer.tooLarge = true
            transfer.body = []  // released now, not when the handle is cleaned up
            return 0
        }
        if length > 0, let data {
            UnsafeRawBufferPointer(start: data, count: length).withMemoryRebound(to: UInt8.self) {
                transfer.body.append(contentsOf: $0)
            }
        }
        return length
    }

    /// A file transfer's bytes: a 200's written to `descriptor` whole, another status's first
    /// `errorBodyBytes` kept. How many bytes were taken (fewer than offered aborts the transfer).
    private func receive(_ bytes: UnsafeRawBufferPointer, into descriptor: Int32) -> Int {
        if fileStatus == nil {
            var status = 0
            _ = ccurl_easy_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
            fileStatus = status
            // The file's bytes are not decoded: a body in a coding is not the file asked for.
            let coding = contentCoding
            if status == 200, coding != "", coding != "identity" {
                writeFailure = .malformed("Content-Encoding \(coding), which was not asked for")
                return 0
            }
        }
        guard fileStatus == 200 else {
            body.append(contentsOf: bytes.prefix(max(0, Self.errorBodyBytes - body.count)))
            guard body.count < Self.errorBodyBytes else {
                errorBodyCut = true
                return 0
            }
            return bytes.count
        }
        guard written + bytes.count <= maxBodyBytes else {
            tooLarge = true
            return 0
        }
        var offset = 0
        while offset < bytes.count {
            let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let reason = String(cString: strerror(count < 0 ? errno : EIO))
                writeFailure = .unreachable("cannot write the body to its file: \(reason)")
                return 0
            }
            offset += count
        }
        written += bytes.count
        return bytes.count
    }

    /// curl's progress callback: aborts once more bytes came over the wire than the limit.
    private static let progress: curl_xferinfo_callback = { context, _, received, _, _ in
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
        guard received > curl_off_t(transfer.maxBodyBytes) else { return 0 }
        transfer.tooLarge = true
        return 1
    }

    /// Judges how the transfer ended (`code` from curl) and hands it to `deliver`.
    /// The caller has already removed the handle from the multi.
    func finish(_ code: CURLcode) {
        complete(outcome(of: code))
    }

    /// The request is abandoned (its caller was cancelled) before it finished.
    func cancel() {
        complete(.failure(.cancelled))
    }

    private func outcome(of code: CURLcode) -> Result<UpstreamReply, UpstreamError> {
        if let writeFailure { return .failure(writeFailure) }
        let code = errorBodyCut && code == CURLE_WRITE_ERROR ? CURLE_OK : code
        if tooLarge || code == CURLE_FILESIZE_EXCEEDED {
            return .failure(.malformed("body larger than \(maxBodyBytes) bytes"))
        }
        switch code {
        case CURLE_OK:
            var status = 0
            var type: UnsafeMutablePointer<CChar>?
            _ = ccurl_easy_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
            _ = ccurl_easy_get_string(easy, CURLINFO_CONTENT_TYPE, &type)
            return decoded().map { body, gzipped in
                UpstreamReply(
                    status: status, contentType: type.map { String(cString: $0) }, body: body,
                    validators: UpstreamValidators(etag: header("ETag"), lastModified: header("Last-Modified")),
                    cacheControl: header("Cache-Control"), gzipped: gzipped)
            }
        case CURLE_OPERATION_TIMEDOUT:
            return .failure(.timeout)
        case CURLE_BAD_CONTENT_ENCODING, CURLE_WEIRD_SERVER_REPLY:
            return .failure(.malformed(description(of: code)))
        default:
            return .failure(.unreachable(description(of: code)))
        }
    }

    /// The body as sent (no `Content-Encoding`, or `identity`) or inflated from gzip, with the
    /// gzip bytes it came as; a body larger than `maxBodyBytes` once inflated, a damaged gzip
    /// member, or a coding this client did not ask for is malformed. No body (a 304, which may
    /// name the coding of the representation it stands for) is no body.
    private func decoded() -> Result<(body: [UInt8], gzipped: [UInt8]?), UpstreamError> {
        let coding = contentCoding
        switch coding {
        case _ where body.isEmpty, "", "identity":
            return .success((body, nil))
        case "gzip", "x-gzip":
            switch Gzip.decompress(body, limit: maxBodyBytes) {
            // The copy is kept with the entry: not in the array the callback grew.
            case .success(let inflated): return .success((inflated, Gzip.exactlySized(body)))
            case .failure(.tooLarge): return .failure(.malformed("body larger than \(maxBodyBytes) bytes"))
            case .failure(.damaged): return .failure(.malformed("a damaged gzip body"))
            }
        default:
            return .failure(.malformed("Content-Encoding \(coding), which was not asked for"))
        }
    }

    /// The response's `Content-Encoding`, trimmed and in lower case; empty when it sent none.
    private var contentCoding: String {
        header("Content-Encoding")?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
    }

    /// The value of the response's last field named `name` (of the last response, after any 1xx),
    /// or nil when it sent none.
    private func header(_ name: String) -> String? {
        var field: UnsafeMutablePointer<curl_header>?
        guard curl_easy_header(easy, name, 0, UInt32(CURLH_HEADER), -1, &field) == CURLHE_OK, let field,
            let value = field.pointee.value
        else { return nil }
        return String(cString: value)
    }

    /// curl's error buffer when it has something, else its generic text for `code`.
    private func description(of code: CURLcode) -> String {
        errorText.pointee != 0 ? String(cString: errorText) : String(cString: curl_easy_strerror(code))
    }

    /// Frees what the transfer made and hands `result` to the waiting task. Exactly once per
    /// transfer; the handle is its lender's again.
    private func complete(_ result: Result<UpstreamReply, UpstreamError>) {
        if let ownHeaders { curl_slist_free_all(ownHeaders) }
        ownHeaders = nil
        errorText.deallocate()
        body = []
        deliver(result)
    }
}
