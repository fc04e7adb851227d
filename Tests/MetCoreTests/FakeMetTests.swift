import Foundation
import TestKit
import Testing

@testable import MetCore
@testable import MetEngine
@testable import MetFixtures

/// The repository's fixture archive, loaded once.
private let archive: FixtureArchive = {
    do {
        return try FixtureArchive(directory: Repository.fixtures, syntheticCount: 50)
    } catch {
        preconditionFailure("cannot load the fixtures: \(error)")
    }
}()

private let objectTarget = "/public/collection/v1/objects/436535"

/// A fake with the given options, a manual clock and an identity "compressor".
private func makeFake(_ options: FakeMet.Options = FakeMet.Options(), time: ManualTime = ManualTime(1_800_000_000))
    -> FakeMet
{
    FakeMet(archive: archive, options: options, time: time, compress: { $0 })
}

/// Answers `request` on the immediate path, which must not defer.
private func answer(_ fake: FakeMet, _ request: Request) throws -> Response {
    try #require(fake.readyResponse(to: request))
}

private func answer(_ fake: FakeMet, _ target: String) throws -> Response {
    try answer(fake, .get(target))
}

/// The `/__stats` document.
private struct Stats: Decodable, Equatable {
    var total: Int
    var waiting: Int
    var blocked: Int
    var failed: Int
    var paths: [String: Int]
}

private func stats(_ fake: FakeMet) throws -> Stats {
    try JSONDecoder().decode(Stats.self, from: Data(try answer(fake, FakeMet.statsPath).body))
}

@Suite("Fake Met responder")
struct FakeMetTests {
    @Test func answersLikeTheMetWithItsHeaders() throws {
        let response = try answer(makeFake(), objectTarget)
        #expect(response.status == 200)
        #expect(response.body == archive.answer(path: objectTarget, query: []).body)
        #expect(response.isChunked)
        #expect(response.headers["Content-Type"] == "application/json; charset=UTF-8")
        #expect(response.headers["Content-Encoding"] == nil)
        #expect(response.headers["Vary"] == "Origin")
        #expect(response.headers["Access-Control-Allow-Origin"] == "*")
        #expect(response.headers["X-CDN"] == "Imperva")
        let cookies = response.headers.filter { $0.name == "Set-Cookie" }.map(\.value)
        #expect(cookies.count == 2)
        #expect(cookies.contains { $0.hasPrefix("visid_incap_") && $0.contains("path=/") })
        #expect(cookies.contains { $0.hasPrefix("incap_ses_") && $0.contains("path=/") })
        for name in ["Cache-Control", "ETag", "Last-Modified", "Content-Length", "Expires"] {
            #expect(response.headers[name] == nil)
        }
    }

    @Test func errorsKeepTheMetsStatusAndBody() throws {
        let fake = makeFake()
        let missing = try answer(fake, "/public/collection/v1/objects/999999999")
        #expect(missing.status == 404)
        #expect(String(decoding: missing.body, as: UTF8.self) == #"{"message":"ObjectID not found"}"#)
        let paged = try answer(fake, "/public/collection/v1.1/search?title=true&q=cypress&limit=1")
        #expect(String(decoding: paged.body, as: UTF8.self) == #"{"total":2,"objectIDs":[436535]}"#)
    }

    @Test(arguments: ["gzip", "gzip, deflate, br", "br;q=1.0, GZIP;q=0.5"])
    func compressesWhenTheClientAcceptsGzip(acceptEncoding: String) throws {
        let marker: [UInt8] = [0x1F, 0x8B]
        let fake = FakeMet(
            archive: archive, options: FakeMet.Options(), time: ManualTime(1_800_000_000), compress: { marker + $0 })
        let response = try answer(fake, .get(objectTarget, headers: ["Accept-Encoding": acceptEncoding]))
        #expect(response.headers["Content-Encoding"] == "gzip")
        #expect(response.body == marker + archive.answer(path: objectTarget, query: []).body)
        #expect(response.isChunked)
    }

    @Test func identityEncodingIsNotCompressed() throws {
        let response = try answer(makeFake(), .get(objectTarget, headers: ["Accept-Encoding": "identity"]))
        #expect(response.headers["Content-Encoding"] == nil)
    }

    @Test func headIsNotAllowed() throws {
        let response = try answer(makeFake(), Request(method: "HEAD", target: objectTarget))
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "OPTIONS, GET")
    }

    @Test func latencyDefersToTheAsyncPath() async throws {
        let fake = makeFake(FakeMet.Options(latency: 3_600))
        #expect(fake.readyResponse(to: .get(objectTarget)) == nil)
        #expect(fake.readyResponse(to: .get(FakeMet.statsPath)) != nil)
        // A cancelled wait still answers, at once.
        let task = Task { await fake.response(to: .get(objectTarget)) }
        task.cancel()
        #expect(await task.value.status == 200)
        #expect(try stats(fake).total == 1)
    }

    @Test func aRequestWaitingOutTheLatencyIsWaitingUntilItIsCounted() async throws {
        let fake = makeFake(FakeMet.Options(latency: 3_600))
        let task = Task { await fake.response(to: .get(objectTarget)) }
        await waitUntil { (try? stats(fake).waiting) == 1 }
        #expect(try stats(fake).total == 0)
        task.cancel()
        #expect(await task.value.status == 200)
        #expect(try stats(fake).waiting == 0)
        #expect(try stats(fake).total == 1)
    }

    @Test func theAsyncPathAnswersTheSameWithoutLatency() async throws {
        let fake = makeFake()
        let response = await fake.response(to: .get(objectTarget))
        #expect(response.status == 200)
        #expect(response.body == (try answer(fake, objectTarget)).body)
    }

    @Test func blocksAfterABurstForBlockSecondsThenCountsAgain() throws {
        let time = ManualTime(1_800_000_000)
        let fake = makeFake(FakeMet.Options(blockAfter: 3, blockSeconds: 60), time: time)
        let first = try (1...3).map { _ in try answer(fake, objectTarget).status }
        #expect(first == [200, 200, 200])

        let blocked = try answer(fake, objectTarget)
        #expect(blocked.status == 403)
        #expect(blocked.headers["Content-Type"] == "text/html")
        #expect(blocked.headers["X-Iinfo"] != nil)
        #expect(blocked.isChunked)
        #expect(String(decoding: blocked.body, as: UTF8.self).contains("Request unsuccessful. Incapsula incident ID: "))

        time.advance(by: 59.9)
        #expect(try answer(fake, objectTarget).status == 403)
        time.advance(by: 0.1)
        let after = try (1...4).map { _ in try answer(fake, objectTarget).status }
        #expect(after == [200, 200, 200, 403])
        #expect(
            try stats(fake)
                == Stats(
                    total: 9, waiting: 0, blocked: 3, failed: 0, paths: ["/public/collection/v1/objects/436535": 9]))
    }

    @Test func failuresFollowTheSeed() throws {
        func statuses(seed: UInt64) throws -> [Int] {
            let fake = makeFake(FakeMet.Options(failRate: 0.5, seed: seed))
            return try (0..<64).map { _ in try answer(fake, objectTarget).status }
        }
        let first = try statuses(seed: 7)
        #expect(try statuses(seed: 7) == first)
        #expect(try statuses(seed: 8) != first)
        #expect(Set(first) == [200, 503])
        #expect((16...48).contains(first.filter { $0 == 503 }.count))
    }

    @Test func aFailureIsA503HTMLPage() throws {
        let fake = makeFake(FakeMet.Options(failRate: 1))
        let response = try answer(fake, objectTarget)
        #expect(response.status == 503)
        #expect(response.headers["Content-Type"] == "text/html")
        #expect(try stats(fake).failed == 1)
    }

    @Test func statsCountEveryRequestButThemselves() throws {
        let fake = makeFake(FakeMet.Options(blockAfter: 4))
        for target in [
            objectTarget, objectTarget + "?x=1", "/public/collection/v1/search?q=cypress",
            "/public/collection/v1/search?q=gogh", "/public/collection/v1/departments",
        ] {
            _ = try answer(fake, target)
        }
        _ = try answer(fake, Request(method: "HEAD", target: "/public/collection/v1/departments"))
        let counted = try stats(fake)
        #expect(
            counted
                == Stats(
                    total: 6, waiting: 0, blocked: 2, failed: 0,
                    paths: [
                        "/public/collection/v1/objects/436535": 2, "/public/collection/v1/search": 2,
                        "/public/collection/v1/departments": 2,
                    ]))
        #expect(try stats(fake) == counted)
    }
}
