import CLibevent
import Foundation
import HTTPWire
import MetEngine

/// One client connection: reads HTTP/1.x requests off the socket, hands each to its loop, and
/// writes the responses back in order, straight from the response's own storage (a cached body is
/// not copied). One request at a time: pipelined requests wait in the receive buffer.
///
/// Loop thread only. The loop's connection table owns it from `start()` until `close()`.
final class HTTPConnection {
    /// Where the connection is in its life.
    enum State: Equatable {
        /// Reading (or between) requests.
        case reading
        /// A request went to the core asynchronously; its response will come through the loop.
        case awaiting(UInt64)
        /// The last response is written and our side shut down; reading what the client still
        /// sends until it closes, so that our close does not reset the connection under that response.
        case lingering
        case closed
    }

    /// Queued output bytes beyond which no further pipelined request is answered until the
    /// client reads (back-pressure).
    static let outputHighWater = 262_144

    let descriptor: CInt
    /// The other end of the connection, read once at accept: for the core, and for the access log
    /// (`RequestPeer.text`) when the core names no client behind a proxy.
    let peer: RequestPeer
    private(set) var state = State.reading
    private unowned let loop: HTTPLoop
    private var readEvent: OpaquePointer?
    private var writeEvent: OpaquePointer?
    /// The request under way must be received in full by then (made in `start`).
    private var deadline: RequestDeadline?
    private var input: ReceiveBuffer
    /// The head of the request being received, once complete (its bytes are then consumed).
    private var head: RequestHead?
    /// The state of a chunked body being received.
    private var chunked: ChunkedDecoder?
    /// How far into `input` the search for the end of the head has got.
    private var searched = 0
    private var sentContinue = false
    private var output = OutputQueue()
    /// Close (after lingering) once `output` is written.
    private var closeAfterFlush = false
    /// The client closed its side; nothing more will be read.
    private var readClosed = false
    /// Reading stopped because the receive buffer is full.
    private var readPaused = false
    /// Seconds (the loop's cached clock) of the last byte read or written.
    private var lastActivity: Double

    init(descriptor: CInt, loop: HTTPLoop) {
        self.descriptor = descriptor
        self.loop = loop
        peer = RequestPeer(of: descriptor)
        // A head, then a Content-Length body (or a chunk-size line: chunked data is decoded out of
        // the buffer as it arrives); pipelined requests beyond that wait in the socket.
        input = ReceiveBuffer(
            limit: loop.limits.headBytes + max(loop.limits.bodyBytes, ChunkedDecoder.maxSizeLineBytes))
        lastActivity = loop.cachedNow
    }

    /// Starts reading. Returns false (and closes the socket) if libevent refuses the events.
    func start(base: OpaquePointer) -> Bool {
        let context = Unmanaged.passUnretained(self).toOpaque()
        readEvent = event_new(
            base, descriptor, Int16(EV_READ | EV_PERSIST),
            { _, what, context in
                let connection = Unmanaged<HTTPConnection>.fromOpaque(context!).takeUnretainedValue()
                withExtendedLifetime(connection) { connection.readable(timedOut: what & Int16(EV_TIMEOUT) != 0) }
            }, context)
        writeEvent = event_new(
            base, descriptor, Int16(EV_WRITE | EV_PERSIST),
            { _, what, context in
                let connection = Unmanaged<HTTPConnection>.fromOpaque(context!).takeUnretainedValue()
                withExtendedLifetime(connection) { connection.writable(timedOut: what & Int16(EV_TIMEOUT) != 0) }
            }, context)
        deadline = try? RequestDeadline(on: loop.eventLoop) { [unowned self] in requestDeadlinePassed() }
        var timeout = loop.idleTimeout
        guard readEvent != nil, writeEvent != nil, deadline != nil, event_add(readEvent, &timeout) == 0 else {
            close()
            return false
        }
        return true
    }

    /// Whether closing now loses nothing: no request under way, nothing buffered either way.
    var isIdle: Bool { state == .reading && head == nil && input.count == 0 && output.isEmpty }

    // MARK: Reading

    private func readable(timedOut: Bool) {
        if timedOut { return timeout() }
        if state == .lingering { return discardInput() }
        let space = input.freeSpace()
        guard space.count > 0 else {
            // Full of pipelined requests while one is answered: wait until some are taken.
            event_del(readEvent)
            readPaused = true
            return
        }
        let received = read(descriptor, space.baseAddress, space.count)
        if received > 0 {
            input.didReceive(received)
            lastActivity = loop.cachedNow
            processInput()
        } else if received == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            peerClosed()
        }
    }

    /// Answers every complete request in the buffer, one after another, until one goes to the
    /// core asynchronously, the output backs up, or the connection is to close.
    func processInput() {
        while state == .reading && !closeAfterFlush && output.bytes < Self.outputHighWater {
            let next: (head: RequestHead, body: [UInt8])?
            do {
                next = try nextRequest()
            } catch {
                reject(error)
                return
            }
            guard let next else { break }
            loop.handle(next.head, body: next.body, on: self)
        }
        if state == .reading && !closeAfterFlush {
            if output.bytes >= Self.outputHighWater {
                // Waiting for the client to read, not to send: the idle timeout bounds that.
                deadline?.disarm()
            } else if head != nil || input.count > 0 {
                deadline?.arm(now: loop.cachedNow, seconds: loop.readTimeoutSeconds)
            } else {
                input.release()  // Idle: no buffer held until the next request arrives.
            }
        }
        if readPaused && state == .reading && !readClosed {
            readPaused = false
            var timeout = loop.idleTimeout
            event_add(readEvent, &timeout)
        }
    }

    /// The next complete request in `input`, taken off it; nil when more bytes are needed. The
    /// head's bytes are consumed once parsed, chunked body bytes as they are decoded.
    private func nextRequest() throws(Problem) -> (head: RequestHead, body: [UInt8])? {
        let limits = loop.limits
        if head == nil {
            guard let end = RequestHead.end(in: input.bytes, from: searched) else {
                searched = RequestHead.resumePoint(afterSearching: input.count)
                if input.count > limits.headBytes {
                    let lineEnded = input.bytes.prefix(limits.targetBytes).contains(RequestHead.lineFeed)
                    throw lineEnded
                        ? Problem(.headersTooLarge, "The request head is larger than \(limits.headBytes) bytes.")
                        : Problem(.uriTooLong, "The request line is longer than \(limits.targetBytes) bytes.")
                }
                return nil
            }
            guard end <= limits.headBytes else {
                throw Problem(.headersTooLarge, "The request head is larger than \(limits.headBytes) bytes.")
            }
            let parsed: RequestHead
            do {
                parsed = try RequestHead(parsing: UnsafeRawBufferPointer(rebasing: input.bytes[..<end]))
            } catch {
                throw Problem(error)
            }
            switch parsed.framing {
            case .length(let length) where length > limits.bodyBytes:
                throw Problem(.bodyTooLarge, "The request body is larger than \(limits.bodyBytes) bytes.")
            case .length:
                break
            case .chunked:
                chunked = ChunkedDecoder(limit: limits.bodyBytes, trailerLimit: limits.headBytes)
            }
            input.consume(end)
            searched = 0
            head = parsed
        }
        guard let parsed = head else { return nil }
        let body: [UInt8]
        if var decoder = chunked {
            chunked = nil  // Not left half-updated in `self` while it decodes (no copy on write).
            do {
                input.consume(try decoder.decode(input.bytes))
            } catch {
                throw Problem(error)
            }
            guard decoder.isComplete else {
                chunked = decoder
                sendContinueIfExpected(parsed)
                return nil
            }
            body = decoder.body
        } else {
            guard case .length(let length) = parsed.framing, input.count >= length else {
                sendContinueIfExpected(parsed)
                return nil
            }
            body = Array(input.bytes[..<length])
            input.consume(length)
        }
        head = nil
        sentContinue = false
        deadline?.disarm()
        return (parsed, body)
    }

    private func sendContinueIfExpected(_ head: RequestHead) {
        guard head.expectsContinue, !sentContinue else { return }
        sentContinue = true
        enqueue(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), [], endsResponse: false)
    }

    /// A request that cannot be read: its problem, then the connection closes (what follows
    /// cannot be trusted to start a new request).
    private func reject(_ problem: Problem) {
        loop.countUnreadRequest()
        let requestID = loop.unreadRequestID()
        let response = loop.unread(problem.response, requestID: requestID)
        closeAfterFlush = true
        let (head, body) = ResponseEncoder.encode(
            response, isHead: false, minorVersion: 1, close: true, date: loop.dateLine(for: response),
            requestID: requestID)
        loop.logRejected(response, requestID: requestID, on: self)
        enqueue(head, body, endsResponse: true)
    }

    private func peerClosed() {
        readClosed = true
        event_del(readEvent)
        switch state {
        case .awaiting, .lingering, .closed:
            close()
        case .reading:
            if output.isEmpty { close() } else { closeAfterFlush = true }
        }
    }

    /// Lingering: reads what the client still sends into the receive buffer and drops it.
    private func discardInput() {
        input.consume(input.count)
        let space = input.freeSpace()
        let received = read(descriptor, space.baseAddress, space.count)
        if received == 0 || (received < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            close()
        }
    }

    /// Whether the loop may close this connection to make room for a waiting client when the
    /// connection cap is reached: one idle for at least `age` seconds (the loop's clock), or one
    /// whose request began at least `age` seconds ago and is still not received in full. An
    /// ordinary client sends its request at once; a client that trickles it holds a slot others
    /// need. A connection just accepted counts as active: its request may not have been read yet.
    func mayBeShed(now: Double, age: Double) -> Bool {
        guard state == .reading, output.isEmpty, !closeAfterFlush else { return false }
        if let started = deadline?.started, now - started >= age { return true }
        return isIdle && now - lastActivity >= age
    }

    /// The request under way was not received in full within `--read-timeout` of its
    /// first byte, however steadily its bytes trickled in: 408, then close.
    private func requestDeadlinePassed() {
        deadline?.expired()
        guard state == .reading, !closeAfterFlush, head != nil || input.count > 0 else { return }
        reject(
            Problem(
                .requestTimeout, "The request was not received within \(loop.readTimeoutSeconds) s."))
    }

    private func timeout() {
        switch state {
        case .awaiting, .closed:
            return  // The core has the request; upstream waits have their own timeouts.
        case .lingering:
            close()
        case .reading:
            guard loop.cachedNow - lastActivity >= loop.idleTimeoutSeconds - 0.01 else { return }
            if !output.isEmpty || readClosed {
                close()  // The client stopped reading its responses.
            } else if head != nil || input.count > 0 {
                reject(Problem(.requestTimeout, "The request was not received within \(loop.idleTimeoutSeconds) s."))
            } else {
                close()  // Idle keep-alive.
            }
        }
    }

    // MARK: Writing

    /// Writes `response` as the answer to `head`'s request, after anything already queued, and
    /// returns the body bytes it carries. Called by the loop; the connection goes back to reading.
    @discardableResult
    func send(_ response: Response, for head: RequestHead, closing: Bool, requestID: String) -> Int {
        if state != .closed && state != .lingering { state = .reading }
        let close = closing || !head.keepAlive
        if close { closeAfterFlush = true }
        let isHead = head.method == "HEAD"
        let (headBytes, body) = loop.encode(
            response, isHead: isHead, minorVersion: head.minorVersion, close: close, requestID: requestID)
        if let file = response.fileBody, !isHead {
            // The file is opened now, for this answer only; if it cannot be, the same bytes go
            // from memory under the same head.
            if let slice = file.slice() {
                enqueue(headBytes, file: slice)
                return slice.length
            }
            let bytes = file.bytes()
            enqueue(headBytes, bytes, endsResponse: true)
            return bytes.count
        }
        enqueue(headBytes, body, endsResponse: true)
        return body.count
    }

    /// Marks the connection as waiting for the core's answer to request `id`.
    func await(_ id: UInt64) {
        state = .awaiting(id)
    }

    /// Writes at once what the socket takes; queues the rest behind the write event.
    private func enqueue(_ head: [UInt8], _ body: [UInt8], endsResponse: Bool) {
        guard state != .closed else {
            if endsResponse { loop.responseFinished() }
            return
        }
        var written = 0
        if output.isEmpty {
            written = head.withUnsafeBytes { headBytes in
                body.withUnsafeBytes { bodyBytes in
                    // On the stack: this runs for every response.
                    withUnsafeTemporaryAllocation(of: iovec.self, capacity: 2) { vectors in
                        vectors[0] = iovec(
                            iov_base: UnsafeMutableRawPointer(mutating: headBytes.baseAddress), iov_len: headBytes.count
                        )
                        vectors[1] = iovec(
                            iov_base: UnsafeMutableRawPointer(mutating: bodyBytes.baseAddress), iov_len: bodyBytes.count
                        )
                        return writev(descriptor, vectors.baseAddress, bodyBytes.isEmpty ? 1 : 2)
                    }
                }
            }
            if written < 0 {
                guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                    if endsResponse { loop.responseFinished() }
                    close()
                    return
                }
                written = 0
            }
            if written == head.count + body.count {
                lastActivity = loop.cachedNow
                if endsResponse { loop.responseFinished() }
                if closeAfterFlush { linger() }
                return
            }
        }
        output.queue(head: head, body: body, written: written, endsResponse: endsResponse)
        var timeout = loop.idleTimeout
        event_add(writeEvent, &timeout)
    }

    /// Queues a head and the file body that follows it, and writes at once what the socket takes
    /// when nothing was queued before them; the rest waits for the write event.
    private func enqueue(_ head: [UInt8], file: FileSlice) {
        guard state != .closed else { return loop.responseFinished() }
        let wasEmpty = output.isEmpty
        output.queue(head: head, body: [], written: 0, endsResponse: false)
        output.queue(file: file, endsResponse: true)
        if wasEmpty {
            let (written, ended) = output.write(to: descriptor)
            for _ in 0..<ended { loop.responseFinished() }
            guard written >= 0 else { return close() }
            if written > 0 { lastActivity = loop.cachedNow }
            if output.isEmpty {
                if closeAfterFlush { linger() }
                return
            }
        }
        var timeout = loop.idleTimeout
        event_add(writeEvent, &timeout)
    }

    private func writable(timedOut: Bool) {
        if timedOut {
            // Not one byte taken by the client for the whole idle timeout.
            return close()
        }
        let (written, ended) = output.write(to: descriptor)
        for _ in 0..<ended { loop.responseFinished() }
        guard written >= 0 else { return close() }
        if written > 0 { lastActivity = loop.cachedNow }
        guard output.isEmpty else { return }
        event_del(writeEvent)
        if closeAfterFlush {
            linger()
        } else {
            processInput()  // Requests held back while the output was backed up.
        }
    }

    /// After the last response: shut our side, then wait (briefly) for the client to close.
    private func linger() {
        guard state != .closed else { return }
        if readClosed { return close() }
        state = .lingering
        shutdown(descriptor, Int32(SHUT_WR))
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        event_add(readEvent, &timeout)
    }

    /// Frees the events and the socket; unwritten responses are dropped. Safe to call twice.
    func close() {
        guard state != .closed else { return }
        if case .awaiting(let id) = state { loop.clientLeft(id) }
        state = .closed
        for _ in 0..<output.removeAll() { loop.responseFinished() }
        if let readEvent { event_free(readEvent) }
        if let writeEvent { event_free(writeEvent) }
        deadline?.disarm()
        readEvent = nil
        writeEvent = nil
        Glibc.close(descriptor)
        input.deallocate()
        loop.forget(self)
    }
}
