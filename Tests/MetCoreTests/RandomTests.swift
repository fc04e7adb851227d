import Foundation
import Testing

@testable import MetCore
@testable import MetEngine

@Suite("GET /random: a uniform draw among the IDs known for a filter")
struct RandomTests {
    /// The department list of the χ² test: 1,000 IDs, of which every twentieth is a Met 404.
    private static let department = 42
    private static let listed = Array(10_001...11_000)
    private static let notFound = Set(stride(from: 10_020, through: 11_000, by: 20))

    private static func departmentUpstream() -> FakeUpstream {
        let upstream = FakeUpstream()
        upstream.answer(
            .objectList(departmentIds: [department], metadataDate: nil), with: SearchSample.ids(listed.reversed()))
        for id in listed {
            upstream.answer(
                .object(id: id),
                with: notFound.contains(id) ? .notFound("Not a valid object") : .json(SearchSample.record(id)))
        }
        return upstream
    }

    private func drawnID(_ response: Response) throws -> Int {
        #expect(response.status == 200, "\(response.text)")
        return try #require(try response.jsonObject()["objectID"] as? Int)
    }

    /// 2,000 draws over 950 valid IDs: each drawn ID is valid, and the counts pass Pearson's χ²
    /// test of uniformity at α = 0.001 (950 cells, 949 degrees of freedom: the critical value is
    /// about 1,094.1, from the Wilson–Hilferty approximation). The generator is seeded, so the draws
    /// are the same every run; a draw that favoured cached IDs, or took IDs modulo a bound, fails.
    @Test func twoThousandDrawsAreValidAndUniform() async throws {
        let harness = Harness(upstream: Self.departmentUpstream(), random: SeededRandom(seed: 20_261_202))
        var counts: [Int: Int] = [:]
        for _ in 0..<2_000 {
            let id = try drawnID(await harness.get("/random?departmentId=\(Self.department)&format=json"))
            counts[id, default: 0] += 1
        }
        let valid = Set(Self.listed).subtracting(Self.notFound)
        #expect(Set(counts.keys).isSubset(of: valid))
        let expected = 2_000 / Double(valid.count)
        let chiSquared = valid.reduce(0.0) { sum, id in
            let observed = Double(counts[id] ?? 0)
            return sum + (observed - expected) * (observed - expected) / expected
        }
        let degrees = Double(valid.count - 1)
        let z = 3.090_232  // the standard normal's 0.999 quantile
        let critical = degrees * pow(1 - 2 / (9 * degrees) + z * (2 / (9 * degrees)).squareRoot(), 3)
        #expect(chiSquared < critical, "χ² = \(chiSquared) over \(degrees) degrees of freedom")
        // Every ID was fetched at most once, the list once.
        #expect(harness.upstream.calls.count == Set(harness.upstream.calls).count)
    }

    @Test func aFilterTheRecordMustMeetIsCheckedOnTheRecord() async throws {
        let upstream = FakeUpstream()
        upstream.answer(.objectList(departmentIds: [], metadataDate: nil), with: SearchSample.ids([1, 2, 3, 4]))
        upstream.answer(.object(id: 1), with: .json(SearchSample.record(1, image: false)))
        upstream.answer(.object(id: 2), with: .notFound())
        upstream.answer(.object(id: 3), with: .json(SearchSample.record(3, image: false)))
        upstream.answer(.object(id: 4), with: .json(SearchSample.record(4)))
        let harness = Harness(upstream: upstream, random: SeededRandom(seed: 7))
        for _ in 0..<20 {
            let response = await harness.get("/random")
            #expect(response.status == 302)
            #expect(response.headers["Location"] == "/objects/4")
            #expect(response.headers["Cache-Control"] == "no-store")
        }
        // Without the image requirement, 1 and 3 qualify too; 2 never (a Met 404).
        var drawn = Set<Int>()
        for _ in 0..<60 { drawn.insert(try drawnID(await harness.get("/random?hasImages=false&format=json"))) }
        #expect(drawn == [1, 3, 4])
        #expect(harness.upstream.callCount(for: .object(id: 2)) == 1)
    }

    /// A list in which an ID appears several times (v1.1 pages can overlap) draws each ID with
    /// the same chance, not by how often it is listed.
    @Test func anIDListedSeveralTimesIsDrawnAsOften() async throws {
        let upstream = FakeUpstream()
        upstream.answer(.objectList(departmentIds: [], metadataDate: nil), with: SearchSample.ids([1, 1, 1, 1, 1, 2]))
        SearchSample.answerObjects([1, 2], on: upstream)
        let harness = Harness(upstream: upstream, random: SeededRandom(seed: 9))
        var counts: [Int: Int] = [:]
        for _ in 0..<600 { counts[try drawnID(await harness.get("/random?format=json")), default: 0] += 1 }
        // Each about 300; listed five times to one, 1 would get about 500.
        #expect((240...360).contains(counts[1] ?? 0), "\(counts)")
        #expect(try await harness.get("/random?format=json").jsonObject()["drawnFrom"] as? Int == 2)
    }

    @Test func publicDomainOnlyLeavesTheRestOut() async throws {
        let upstream = FakeUpstream()
        upstream.answer(.objectList(departmentIds: [], metadataDate: nil), with: SearchSample.ids([1, 2]))
        upstream.answer(.object(id: 1), with: .json(#"{"objectID":1,"isPublicDomain":false,"primaryImage":"x"}"#))
        upstream.answer(.object(id: 2), with: .json(SearchSample.record(2)))
        let harness = Harness(upstream: upstream, random: SeededRandom(seed: 3))
        for _ in 0..<10 {
            #expect(try drawnID(await harness.get("/random?isPublicDomain=true&hasImages=false&format=json")) == 2)
        }
    }

    @Test func theJSONFormCarriesTheRecordAndWhatItWasDrawnFrom() async throws {
        let harness = Harness(upstream: Self.departmentUpstream(), random: SeededRandom(seed: 1)) {
            $0.presentation.publicURL = "https://met.example"
        }
        let response = await harness.get("/random?departmentId=\(Self.department)&format=json")
        let body = try response.jsonObject()
        let id = try #require(body["objectID"] as? Int)
        #expect(body["location"] as? String == "https://met.example/objects/\(id)")
        #expect(body["drawnFrom"] as? Int == 1_000)
        #expect((body["object"] as? [String: Any])?["objectID"] as? Int == id)
        #expect(response.headers["Cache-Control"] == "no-store")
    }

    @Test func aSearchDrawsFromItsFirstPageAndThePagesMemoryHolds() async throws {
        let upstream = FakeUpstream()
        let firstPage = Array(1...500)
        let thirdPage = Array(1_001...1_500)
        upstream.answer(SearchSample.page(0, "sunflowers"), with: SearchSample.ids(firstPage, total: 1_500))
        upstream.answer(SearchSample.page(2, "sunflowers"), with: SearchSample.ids(thirdPage, total: 1_500))
        SearchSample.answerObjects(firstPage + thirdPage, on: upstream)
        let harness = Harness(upstream: upstream, random: SeededRandom(seed: 11))
        var drawn = Set<Int>()
        for _ in 0..<40 { drawn.insert(try drawnID(await harness.get("/random?q=sunflowers&format=json"))) }
        #expect(drawn.isSubset(of: Set(firstPage)))
        #expect(harness.upstream.callCount(for: SearchSample.page(1, "sunflowers")) == 0)
        // Once /search has read the third page, random draws from it too.
        _ = await harness.get("/search?q=sunflowers&offset=1000&limit=1")
        var later = Set<Int>()
        for _ in 0..<80 { later.insert(try drawnID(await harness.get("/random?q=sunflowers&format=json"))) }
        #expect(!later.isDisjoint(with: Set(thirdPage)))
        #expect(later.isSubset(of: Set(firstPage + thirdPage)))
        #expect(harness.upstream.callCount(for: SearchSample.page(1, "sunflowers")) == 0)
        let body = try await harness.get("/random?q=sunflowers&format=json").jsonObject()
        #expect(body["drawnFrom"] as? Int == 1_000)
    }

    @Test func anEmptyListIsANoMatch() async throws {
        let upstream = FakeUpstream()
        upstream.answer(SearchSample.page(0, "nothing"), with: SearchSample.ids([]))
        let harness = Harness(upstream: upstream)
        let response = await harness.get("/random?q=nothing")
        #expect(response.status == 404)
        #expect(response.problemCode == "no_match")
    }

    @Test func aFilterNoRecordMeetsGivesUpAfterABoundedNumberOfFetches() async throws {
        let upstream = FakeUpstream()
        let ids = Array(1...1_000)
        upstream.answer(.objectList(departmentIds: [], metadataDate: nil), with: SearchSample.ids(ids))
        for id in ids { upstream.answer(.object(id: id), with: .json(SearchSample.record(id, image: false))) }
        let harness = Harness(upstream: upstream, random: SeededRandom(seed: 5))
        let response = await harness.get("/random")
        #expect(response.status == 404)
        #expect(response.problemCode == "no_match")
        #expect(upstream.calls.count == 1 + RandomHandler.maxFetchedDraws)
    }

    @Test func aFailedFetchIsAnsweredNotDrawnAround() async throws {
        let upstream = FakeUpstream()
        upstream.answer(.objectList(departmentIds: [], metadataDate: nil), with: SearchSample.ids([1]))
        upstream.answer(.object(id: 1), with: .errorPage(500))
        let harness = Harness(upstream: upstream)
        let response = await harness.get("/random")
        #expect(response.status == 502)
        #expect(response.problemCode == "upstream_error")
    }

    @Test(arguments: [
        ("/random?q=", "q"),
        ("/random?hasImages=yes", "hasImages"),
        ("/random?isPublicDomain=1", "isPublicDomain"),
        ("/random?departmentId=abc", "departmentId"),
        ("/random?departmentId=0", "departmentId"),
        ("/random?format=xml", "format"),
        ("/random?limit=3", "limit"),
        ("/random?q=a&q=b", "q"),
        ("/random?q=a&dateBegin=1", "dateBegin"),
    ])
    func malformedRequestsAreRefusedNamingTheParameter(target: String, parameter: String) async throws {
        let harness = Harness()
        let response = try #require(harness.getImmediately(target))
        #expect(response.status == 400)
        #expect(try response.jsonObject()["parameter"] as? String == parameter)
    }
}
