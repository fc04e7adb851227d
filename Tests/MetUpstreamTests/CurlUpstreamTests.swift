import Foundation
import MetEngine
import MetUpstream
import TestKit
import Testing

/// The production upstream client (libcurl on its own event loop) over real HTTP on loopback,
/// against an upstream that misbehaves on purpose: redirects refused, bodies bounded on the wire
/// and decoded, timeouts, refused connections, and cancellation at any moment. Every call is
/// bounded by the client's own timeout; loops are bounded in count.
@Suite("CurlUpstream: libcurl's multi loop against a misbehaving upstream", .timeLimit(.minutes(2)))
struct CurlUpstreamTests {
    private static let objects = "/public/collection/v1/objects/"

    /// A client of `upstream` with a 1 MiB body bound.
    private static func client(of upstream: MisbehavingUpstream, timeout: Double = 10) throws -> CurlUpstream {
        try CurlUpstream(origin: upstream.baseURL, connectTimeout: 2, timeout: timeout, maxBodyBytes: 1_048_576)
    }

    /// `GET` of `behaviour`'s object: the reply, or the error.
    private static func get(
        _ behaviour: MisbehavingUpstream.Behaviour, from client: CurlUpstream
    ) async -> Result<UpstreamReply, UpstreamError> {
        do {
            return .success(try await client.get(path: objects + String(behaviour.rawValue), query: []))
        } catch {
            return .failure(error)
        }
    }

    @Test func anOrdinaryRecordArrivesWholeWithItsType() async throws {
        let upstream = try MisbehavingUpstream()
        let reply = try await Self.get(.ordinary, from: Self.client(of: upstream)).get()
        #expect(reply.status == 200)
        #expect(reply.contentType == "application/json")
        #expect(String(decoding: reply.body, as: UTF8.self) == #"{"objectID":6,"title":"An ordinary record"}"#)
    }

    @Test func validatorsArriveAndAConditionalRequestIsAnsweredWithoutABody() async throws {
        let upstream = try MisbehavingUpstream()
        let client = try Self.client(of: upstream)
        let path = Self.objects + String(MisbehavingUpstream.Behaviour.validated.rawValue)
        let first = try await client.get(path: path, query: [])
        #expect(first.status == 200 && first.body == Array("JPEG".utf8))
        #expect(first.validators.etag == MisbehavingUpstream.validatedTag)
        #expect(first.validators.lastModified == "Wed, 23 Oct 2019 00:00:00 GMT")
        #expect(first.cacheControl == "max-age=432000")
        let second = try await client.get(path: path, query: [], conditions: first.validators)
        #expect(second.status == 304 && second.body.isEmpty)
        #expect(second.validators == first.validators)
        // A validator that could start a new header line is not sent: the request is unconditional.
        let unsafe = UpstreamValidators(etag: "\"abc-4\"\r\nX-Injected: 1", lastModified: nil)
        #expect(try await client.get(path: path, query: [], conditions: unsafe).status == 200)
        #expect(upstream.requests(for: .validated) == 3)
    }

    @Test func aRedirectIsAnsweredNotFollowed() async throws {
        let upstream = try MisbehavingUpstream()
        let reply = try await Self.get(.redirect, from: Self.client(of: upstream)).get()
        #expect(reply.status == 302)
        #expect(upstream.requests(for: .ordinary) == 0)
    }

    @Test(arguments: [
        MisbehavingUpstream.Behaviour.oversizedWithLength, .oversizedChunked, .gzipBomb, .endlessBody,
    ])
    func aBodyPastTheBoundIsMalformedAndDropped(behaviour: MisbehavingUpstream.Behaviour) async throws {
        let upstream = try MisbehavingUpstream()
        let client = try Self.client(of: upstream)
        #expect(await Self.get(behaviour, from: client) == .failure(.malformed("body larger than 1048576 bytes")))
        // The loop goes on serving.
        #expect(try await Self.get(.ordinary, from: client).get().status == 200)
    }

    @Test func aTrickleEndsInATimeout() async throws {
        let client = try Self.client(of: MisbehavingUpstream(), timeout: 1)
        #expect(await Self.get(.trickle, from: client) == .failure(.timeout))
    }

    @Test func aRefusedConnectionIsUnreachable() async throws {
        // A port bound but not listening: connecting to it is refused.
        let (socket, port) = try Loopback.bind(listening: false)
        defer { close(socket) }
        let client = try CurlUpstream(
            origin: "http://127.0.0.1:\(port)", connectTimeout: 2, timeout: 5, maxBodyBytes: 1_024)
        let result: Result<UpstreamReply, UpstreamError>
        do {
            result = .success(try await client.get(path: Self.objects + "1", query: []))
        } catch {
            result = .failure(error)
        }
        guard case .failure(.unreachable) = result else {
            Issue.record("expected unreachable, got \(result)")
            return
        }
    }

    /// Cancels calls at different moments of their life (before curl's thread took them, while
    /// connecting, while the body streams, as the answer arrives): each ends once, with
    /// `.cancelled` or the outcome it reached first (the record; the endless body's bound), and the
    /// client goes on serving.
    @Test func aCancelAtAnyMomentEndsTheCallOnce() async throws {
        let upstream = try MisbehavingUpstream()
        let client = try Self.client(of: upstream)
        for round in 0..<40 {
            let behaviour: MisbehavingUpstream.Behaviour = round.isMultiple(of: 2) ? .endlessBody : .ordinary
            let call = Task { await Self.get(behaviour, from: client) }
            for _ in 0..<(round % 5) { await Task.yield() }
            if round % 7 == 6 { try await Task.sleep(for: .milliseconds(5)) }
            call.cancel()
            switch await call.value {
            case .failure(.cancelled): break
            case .success(let reply) where behaviour == .ordinary: #expect(reply.status == 200)
            case .failure(.malformed) where behaviour == .endlessBody: break
            case let other: Issue.record("round \(round), \(behaviour): \(other)")
            }
        }
        #expect(try await Self.get(.ordinary, from: client).get().status == 200)
    }

    /// Finished transfers' handles are used again (`CurlMulti.recycle`): one after another, calls
    /// of every kind on one client each get their own answer, with nothing of the call before
    /// (its header lines, its body, its failure).
    @Test func aCallOnAHandleUsedBeforeGetsOnlyItsOwnAnswer() async throws {
        let upstream = try MisbehavingUpstream()
        let client = try Self.client(of: upstream)
        let validated = Self.objects + String(MisbehavingUpstream.Behaviour.validated.rawValue)
        let tags = UpstreamValidators(etag: MisbehavingUpstream.validatedTag, lastModified: nil)
        for round in 0..<12 {
            switch round % 4 {
            case 0:
                let reply = try await client.get(path: validated, query: [], conditions: tags)
                #expect(reply.status == 304 && reply.body.isEmpty, "round \(round)")
            case 1:
                // Right after a conditional call: no If-None-Match is left on the handle.
                let reply = try await client.get(path: validated, query: [])
                #expect(reply.status == 200 && reply.body == Array("JPEG".utf8), "round \(round)")
            case 2:
                let failure = await Self.get(.gzipBomb, from: client)
                #expect(failure == .failure(.malformed("body larger than 1048576 bytes")), "round \(round)")
            default:
                let reply = try await Self.get(.ordinary, from: client).get()
                #expect(
                    String(decoding: reply.body, as: UTF8.self) == #"{"objectID":6,"title":"An ordinary record"}"#,
                    "round \(round)")
                #expect(reply.validators.etag == nil && reply.cacheControl == nil, "round \(round)")
            }
        }
        #expect(upstream.requests(for: .validated) == 6)
    }

    @Test func concurrentCallsEachGetTheirOwnAnswer() async throws {
        let upstream = try MisbehavingUpstream()
        let client = try Self.client(of: upstream)
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { (try? await Self.get(.ordinary, from: client).get().status) ?? 0 } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 20))
        #expect(upstream.requests(for: .ordinary) == 20)
    }
}
