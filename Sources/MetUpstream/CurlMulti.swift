import CCurl
import CLibevent
import EventLoops
import Foundation
import MetEngine

/// libcurl's multi interface driven by a libevent loop on a thread of its own (the pattern of
/// curl's `hiperfifo.c`): curl says which sockets to watch (`CURLMOPT_SOCKETFUNCTION`) and when
/// to wake it (`CURLMOPT_TIMERFUNCTION`); the loop tells curl what became ready. Connections to
/// the upstream stay open between requests in the multi's connection cache.
///
/// Every curl and libevent call happens on that thread. Other threads only post jobs
/// (`start`, `cancel`), so a handle is added, removed and freed on its own thread, and a cancel
/// that races the answer finds the transfer gone and does nothing.
final class CurlMulti: @unchecked Sendable {
    private let loop: EventLoop
    private let multi: UnsafeMutableRawPointer
    /// curl's wake-up (`CURLMOPT_TIMERFUNCTION`). Set once in `init`, before the loop starts.
    private var timer: LoopTimer!
    private let headers: UnsafeMutablePointer<curl_slist>
    /// The lines of `headers`, for a transfer that sends more (a conditional request's).
    private let headerLines: [String]
    private let settings: CurlTransfer.Settings
    /// Transfers in flight, by ID. Curl thread only.
    private var transfers: [UInt64: CurlTransfer] = [:]
    /// Easy handles of finished transfers, for the next ones: a new handle for every transfer
    /// (`curl_easy_init`, `curl_easy_cleanup`) was the largest of a fill's allocations. At most
    /// `idleLimit`. Curl thread only.
    private var idleHandles: [UnsafeMutableRawPointer] = []
    private let idleLimit: Int

    /// Creates the multi handle and its loop and starts the loop's thread, which runs for the
    /// life of the process.
    /// `connections` idle connections are kept for reuse (`CURLMOPT_MAXCONNECTS`).
    init(settings: CurlTransfer.Settings, headers: [String], connections: Int) throws(CurlError) {
        _ = Self.globalSetUp
        do {
            loop = try EventLoop(name: "upstream-curl")
        } catch {
            throw CurlError("setting up the curl loop failed: \(error)")
        }
        guard let multi = curl_multi_init() else { throw CurlError("curl_multi_init failed") }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in headers { list = curl_slist_append(list, header) }
        guard let list else { throw CurlError("curl_slist_append failed") }
        self.multi = multi
        self.headers = list
        headerLines = headers
        self.settings = settings
        idleLimit = max(connections, 2)
        do {
            timer = try LoopTimer(on: loop) { [unowned self] in timerFired() }
        } catch {
            throw CurlError("setting up the curl loop failed: \(error)")
        }

        let context = Unmanaged.passUnretained(self).toOpaque()
        guard ccurl_multi_set_socket_function(multi, Self.watchSocket, context) == CURLM_OK,
            ccurl_multi_set_timer_function(multi, Self.setTimer, context) == CURLM_OK,
            // Idle connections kept for reuse: as many as the pacer lets calls out at once. Fewer
            // (16 kept before, under 64 calls at once) closed and opened a connection per call:
            // connect() and close() were 7 % of a fill's CPU.
            ccurl_multi_set_long(multi, CURLMOPT_MAXCONNECTS, max(connections, 2)) == CURLM_OK
        else { throw CurlError("setting up the curl multi handle failed") }
        loop.start(holding: self)
    }

    /// curl's global set-up, which is not thread-safe and so runs once, here.
    private static let globalSetUp: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// Starts `GET url` as transfer `id`, with `extraHeaders` (whole lines, such as
    /// `If-None-Match: "abc"`) after the usual ones, its body into `sink`; `deliver` gets its
    /// outcome exactly once, on the loop. Any thread.
    func start(
        id: UInt64, url: String, extraHeaders: [String] = [], sink: CurlTransfer.Sink = .memory,
        deliver: @escaping @Sendable (Result<UpstreamReply, UpstreamError>) -> Void
    ) {
        loop.execute { [self] in
            let requestHeaders: CurlTransfer.Headers =
                extraHeaders.isEmpty ? .shared(headers) : .own(headerLines + extraHeaders)
            guard
                let transfer = CurlTransfer.make(
                    id: id, easy: idleHandles.popLast() ?? curl_easy_init(), url: url, settings: settings,
                    headers: requestHeaders, sink: sink, deliver: deliver)
            else { return }
            guard curl_multi_add_handle(multi, transfer.easy) == CURLM_OK else {
                transfer.finish(CURLE_FAILED_INIT)
                recycle(transfer.easy)
                return
            }
            transfers[id] = transfer
        }
    }

    /// Keeps the handle of a transfer that is over (removed from the multi, its outcome
    /// delivered) for the next one, or frees it when `idleLimit` are kept. Its pointers to the
    /// transfer are cleared: nothing of a finished transfer is reachable from an idle handle.
    private func recycle(_ easy: UnsafeMutableRawPointer) {
        guard idleHandles.count < idleLimit else { return curl_easy_cleanup(easy) }
        _ = ccurl_easy_set_pointer(easy, CURLOPT_ERRORBUFFER, nil)
        _ = ccurl_easy_set_pointer(easy, CURLOPT_PRIVATE, nil)
        _ = ccurl_easy_set_pointer(easy, CURLOPT_WRITEDATA, nil)
        _ = ccurl_easy_set_pointer(easy, CURLOPT_XFERINFODATA, nil)
        _ = ccurl_easy_set_headers(easy, nil)
        idleHandles.append(easy)
    }

    /// Abandons transfer `id`: its `deliver` gets `.cancelled` unless it finished already.
    /// Any thread; idempotent.
    func cancel(_ id: UInt64) {
        loop.execute { [self] in
            guard let transfer = transfers.removeValue(forKey: id) else { return }
            curl_multi_remove_handle(multi, transfer.easy)
            transfer.cancel()
            recycle(transfer.easy)
        }
    }

    // MARK: The loop

    /// CURLMOPT_SOCKETFUNCTION: watch `socket` for what curl asks, or stop watching it. The
    /// socket's event is kept as curl's per-socket pointer (`curl_multi_assign`).
    private static let watchSocket: curl_socket_callback = { _, socket, what, context, socketContext in
        let multi = Unmanaged<CurlMulti>.fromOpaque(context!).takeUnretainedValue()
        multi.watch(socket, what: what, event: socketContext.map(OpaquePointer.init))
        return 0
    }

    private func watch(_ socket: curl_socket_t, what: Int32, event existing: OpaquePointer?) {
        if what == CURL_POLL_REMOVE {
            if let existing {
                event_free(existing)  // also removes it from the loop
                curl_multi_assign(multi, socket, nil)
            }
            return
        }
        var flags = Int16(EV_PERSIST)
        if what & CURL_POLL_IN != 0 { flags |= Int16(EV_READ) }
        if what & CURL_POLL_OUT != 0 { flags |= Int16(EV_WRITE) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let ready: event_callback_fn = { socket, what, context in
            Unmanaged<CurlMulti>.fromOpaque(context!).takeUnretainedValue().socketReady(socket, what: what)
        }
        if let existing {
            event_del(existing)
            event_assign(existing, loop.base, socket, flags, ready, context)
            event_add(existing, nil)
        } else if let event = event_new(loop.base, socket, flags, ready, context) {
            curl_multi_assign(multi, socket, UnsafeMutableRawPointer(event))
            event_add(event, nil)
        }
    }

    /// CURLMOPT_TIMERFUNCTION: wake curl in `milliseconds` (-1: never). curl may not be called
    /// back from here, so even 0 goes through the timer event.
    private static let setTimer: curl_multi_timer_callback = { _, milliseconds, context in
        let multi = Unmanaged<CurlMulti>.fromOpaque(context!).takeUnretainedValue()
        if milliseconds < 0 {
            multi.timer.cancel()
        } else {
            multi.timer.arm(after: Double(milliseconds) / 1_000)
        }
        return 0
    }

    private func socketReady(_ socket: CInt, what: Int16) {
        var action: Int32 = 0
        if what & Int16(EV_READ) != 0 { action |= CURL_CSELECT_IN }
        if what & Int16(EV_WRITE) != 0 { action |= CURL_CSELECT_OUT }
        var running: Int32 = 0
        curl_multi_socket_action(multi, socket, action, &running)
        collectFinished()
        if running <= 0 { timer.cancel() }
    }

    private func timerFired() {
        var running: Int32 = 0
        curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running)
        collectFinished()
    }

    /// Hands every finished transfer its outcome.
    private func collectFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = ccurl_message_result(message)
            var context: UnsafeMutableRawPointer?
            _ = ccurl_easy_get_pointer(easy, CURLINFO_PRIVATE, &context)
            curl_multi_remove_handle(multi, easy)  // invalidates `message`
            guard let context else { continue }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            transfers[transfer.id] = nil
            transfer.finish(code)
            recycle(easy)
        }
    }
}

/// A failure to set up libcurl or its loop; the text names what failed.
public struct CurlError: Error, CustomStringConvertible, Sendable {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
