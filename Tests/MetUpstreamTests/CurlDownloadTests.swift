import Foundation
import MetEngine
import MetUpstream
import TestKit
import Testing

/// `CurlDownload`, the production client's transfers written into a file (`themet import URL`),
/// against the misbehaving upstream: the file holds exactly the body, a body past the bound or in
/// a coding not asked for fails, and a failure leaves the caller a file to remove, never a hang.
@Suite("CurlDownload: a body written into a file", .timeLimit(.minutes(2)))
struct CurlDownloadTests {
    private static let objects = "/public/collection/v1/objects/"

    /// Downloads `behaviour`'s object into a new file of `directory` within `maxBytes`: the reply
    /// or the error, and the file's bytes.
    private static func download(
        _ behaviour: MisbehavingUpstream.Behaviour, from upstream: MisbehavingUpstream,
        into directory: TemporaryDirectory, maxBytes: Int = 1_048_576
    ) async throws -> (Result<UpstreamReply, UpstreamError>, [UInt8]) {
        let path = directory.path + "/\(behaviour)"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        let client = try CurlDownload(
            connectTimeout: 2, timeout: 10, stallTimeout: 5, maxBytes: maxBytes, accept: "*/*")
        let result: Result<UpstreamReply, UpstreamError>
        do {
            result = .success(
                try await client.fetch(
                    upstream.baseURL + objects + String(behaviour.rawValue), headers: ["X-Test: 1"],
                    into: descriptor))
        } catch {
            result = .failure(error)
        }
        return (result, [UInt8](FileManager.default.contents(atPath: path) ?? Data()))
    }

    @Test func aTwoHundredsBodyIsInTheFileAndNotInTheReply() async throws {
        let (upstream, directory) = (try MisbehavingUpstream(), TemporaryDirectory())
        let (result, file) = try await Self.download(.ordinary, from: upstream, into: directory)
        let reply = try result.get()
        #expect(reply.status == 200)
        #expect(reply.body.isEmpty)
        #expect(String(decoding: file, as: UTF8.self) == #"{"objectID":6,"title":"An ordinary record"}"#)
        // Four megabytes of a record's shape, chunked, within a larger bound: all of them.
        let (large, bytes) = try await Self.download(
            .oversizedChunked, from: upstream, into: directory, maxBytes: 8 << 20)
        #expect(try large.get().status == 200)
        #expect(bytes.count > 4 << 20 && bytes.count < (4 << 20) + 100)
        #expect(bytes.first == UInt8(ascii: "{") && bytes.last == UInt8(ascii: "}"))
    }

    @Test func anotherStatusKeepsItsBodyInTheReplyAndWritesNothing() async throws {
        let (upstream, directory) = (try MisbehavingUpstream(), TemporaryDirectory())
        let (result, file) = try await Self.download(.redirect, from: upstream, into: directory)
        #expect(try result.get().status == 302)
        #expect(file.isEmpty)
        #expect(upstream.requests(for: .ordinary) == 0)
    }

    @Test func anotherStatusWithAnEndlessBodyIsAnsweredWithItsFirst64KiB() async throws {
        let (upstream, directory) = (try MisbehavingUpstream(), TemporaryDirectory())
        // A bound far past 64 KiB: the error's body is cut at 64 KiB, not at the bound.
        let (result, file) = try await Self.download(.endlessError, from: upstream, into: directory, maxBytes: 1 << 30)
        let reply = try result.get()
        #expect(reply.status == 500)
        #expect(reply.contentType == "application/problem+json")
        #expect(reply.body.count == 65_536)
        #expect(file.isEmpty)
    }

    @Test(arguments: [MisbehavingUpstream.Behaviour.oversizedWithLength, .oversizedChunked, .endlessBody])
    func aBodyPastTheBoundFails(behaviour: MisbehavingUpstream.Behaviour) async throws {
        let (upstream, directory) = (try MisbehavingUpstream(), TemporaryDirectory())
        let (result, file) = try await Self.download(behaviour, from: upstream, into: directory)
        #expect(result == .failure(.malformed("body larger than 1048576 bytes")))
        #expect(file.count <= 1_048_576)
    }

    @Test func aBodyInACodingNotAskedForFails() async throws {
        let (upstream, directory) = (try MisbehavingUpstream(), TemporaryDirectory())
        let (result, file) = try await Self.download(.gzipBomb, from: upstream, into: directory, maxBytes: 64 << 20)
        #expect(result == .failure(.malformed("Content-Encoding gzip, which was not asked for")))
        #expect(file.isEmpty)
    }

    @Test func aStalledTransferTimesOutLongBeforeItsWholeBoundAndARefusedConnectionIsUnreachable() async throws {
        let directory = TemporaryDirectory()
        // A byte a second is a stall (under 1 KiB a second): over after 1 s, not the 60 s bound.
        let slow = try CurlDownload(connectTimeout: 2, timeout: 60, stallTimeout: 1, maxBytes: 1_024, accept: "*/*")
        let upstream = try MisbehavingUpstream()
        let descriptor = open(directory.path + "/file", O_WRONLY | O_CREAT, 0o600)
        defer { close(descriptor) }
        await #expect(throws: UpstreamError.timeout) {
            try await slow.fetch(
                upstream.baseURL + Self.objects + String(MisbehavingUpstream.Behaviour.trickle.rawValue), headers: [],
                into: descriptor)
        }
        let (socket, port) = try Loopback.bind(listening: false)
        defer { close(socket) }
        do {
            _ = try await slow.fetch("http://127.0.0.1:\(port)/cache/snapshot", headers: [], into: descriptor)
            Issue.record("a refused connection answered")
        } catch {
            guard case .unreachable = error else {
                Issue.record("expected unreachable, got \(error)")
                return
            }
        }
    }
}
