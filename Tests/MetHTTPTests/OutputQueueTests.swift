import Foundation
import MetEngine
import TestKit
import Testing

@testable import MetHTTP

@Suite("The output queue: memory with writev, files with sendfile, in order")
struct OutputQueueTests {
    /// A connected pair of stream sockets, the first non-blocking (the connection's side).
    private final class SocketPair {
        let writer: CInt
        let reader: CInt

        init(sendBuffer: Int? = nil) throws {
            var ends: [CInt] = [0, 0]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
            (writer, reader) = (ends[0], ends[1])
            _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK)
            if var size = sendBuffer.map(CInt.init) {
                setsockopt(writer, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<CInt>.size))
            }
        }

        /// Everything readable now, without waiting.
        func drain() -> [UInt8] {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let got = recv(reader, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                guard got > 0 else { return received }
                received += buffer[..<got]
            }
        }

        deinit {
            close(writer)
            close(reader)
        }
    }

    /// A file in `directory` holding `bytes`, opened for reading.
    private static func file(_ bytes: [UInt8], in directory: TemporaryDirectory) throws -> OpenFile {
        let path = directory.path + "/body"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let descriptor = open(path, O_RDONLY)
        try #require(descriptor >= 0)
        return OpenFile(descriptor: descriptor)
    }

    private static func bytes(_ count: Int, seed: Int = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ seed) }
    }

    @Test func aHeadItsFileSliceAndTheNextResponseArriveInOrder() throws {
        let directory = TemporaryDirectory()
        let content = Self.bytes(10_000)
        let file = try Self.file(content, in: directory)
        let sockets = try SocketPair()
        var queue = OutputQueue()
        let head = Array("HTTP/1.1 206 Partial Content\r\n\r\n".utf8)
        let next = Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)
        queue.queue(head: head, body: [], written: 0, endsResponse: false)
        queue.queue(file: FileSlice(file: file, offset: 10, length: 5_000), endsResponse: true)
        queue.queue(head: next, body: [], written: 0, endsResponse: true)
        #expect(queue.bytes == head.count + 5_000 + next.count)

        let (written, ended) = queue.write(to: sockets.writer)
        #expect(written == head.count + 5_000 + next.count && ended == 2)
        #expect(queue.isEmpty && queue.bytes == 0)
        #expect(sockets.drain() == head + content[10..<5_010] + next)
    }

    @Test func aFileLargerThanTheSocketTakesGoesOutOverSeveralWrites() throws {
        let directory = TemporaryDirectory()
        let content = Self.bytes(1_000_000, seed: 3)
        let file = try Self.file(content, in: directory)
        let sockets = try SocketPair(sendBuffer: 16_384)
        var queue = OutputQueue()
        let head = Array("HTTP/1.1 200 OK\r\n\r\n".utf8)
        queue.queue(head: head, body: [], written: 0, endsResponse: false)
        queue.queue(file: FileSlice(file: file, offset: 0, length: content.count), endsResponse: true)

        var received: [UInt8] = []
        var responses = 0
        var writes = 0
        while !queue.isEmpty && writes < 10_000 {
            let (written, ended) = queue.write(to: sockets.writer)
            #expect(written >= 0)
            responses += ended
            writes += 1
            received += sockets.drain()
        }
        received += sockets.drain()
        #expect(writes > 1 && responses == 1)
        #expect(received == head + content)
    }

    @Test func aFileShorterThanItsSliceFailsTheConnection() throws {
        let directory = TemporaryDirectory()
        let file = try Self.file(Self.bytes(100), in: directory)
        let sockets = try SocketPair()
        var queue = OutputQueue()
        queue.queue(file: FileSlice(file: file, offset: 0, length: 200), endsResponse: true)
        // The file's 100 bytes go out; the next write finds nothing more to send and fails.
        #expect(queue.write(to: sockets.writer).written == 100)
        #expect(queue.write(to: sockets.writer).written == -1)
        #expect(queue.removeAll() == 1)
    }
}
