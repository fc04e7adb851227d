import MetEngine
import Synchronization

/// Files fetched over HTTP(S) with libcurl straight into an open file, never whole in memory:
/// `themet import URL` taking a snapshot from a running server. The same transfers as
/// `CurlUpstream`'s (HTTP/1.1 and HTTPS only, TLS verified, no redirects, no cookies, bounded),
/// with no gzip asked for (the file's bytes are the file), a connect timeout, a bound on the whole
/// transfer, and a timeout for a transfer stalled below 1 KiB a second.
///
/// Safe from any task; cancelling the calling task abandons the transfer.
public final class CurlDownload: Sendable {
    private let multi: CurlMulti
    private let nextID = Atomic<UInt64>(0)

    /// - Parameters:
    ///   - connectTimeout: seconds to open the connection, TLS included.
    ///   - timeout: seconds for the whole transfer.
    ///   - stallTimeout: seconds the transfer may go on at less than 1 KiB a second.
    ///   - maxBytes: the largest file accepted; past it the transfer fails with `.malformed`.
    ///   - accept: the `Accept` field sent.
    /// - Throws: `CurlError` when libcurl or its loop cannot be set up.
    public init(
        connectTimeout: Double, timeout: Double, stallTimeout: Int, maxBytes: Int, accept: String
    ) throws(CurlError) {
        multi = try CurlMulti(
            settings: CurlTransfer.Settings(
                connectTimeoutMilliseconds: CurlUpstream.milliseconds(connectTimeout),
                totalTimeoutMilliseconds: CurlUpstream.milliseconds(timeout), maxBodyBytes: maxBytes,
                stallSeconds: max(1, stallTimeout)),
            headers: ["Accept: \(accept)"], connections: 1)
    }

    /// `GET url` with `headers` (whole lines, such as `Authorization: Bearer …`), a 200's body
    /// written to `descriptor` (an open file, at its offset) as it comes. The reply: its status and
    /// content type, and for a status other than 200 the first 64 KiB of its body (a 200's body is
    /// in the file, not here). A failure leaves what was written in the file: the caller removes
    /// it.
    public func fetch(_ url: String, headers: [String], into descriptor: Int32) async throws(UpstreamError)
        -> UpstreamReply
    {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let multi = self.multi
        let result = await withTaskCancellationHandler {
            await awaitDelivery { deliver in
                multi.start(id: id, url: url, extraHeaders: headers, sink: .file(descriptor), deliver: deliver)
                if Task.isCancelled { multi.cancel(id) }
            }
        } onCancel: {
            multi.cancel(id)
        }
        return try result.get()
    }
}
