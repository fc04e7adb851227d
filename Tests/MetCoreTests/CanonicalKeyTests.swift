import Testing

@testable import MetCore
@testable import MetEngine

@Suite("Canonical cache keys")
struct CanonicalKeyTests {
    private static let list = MetResource.basePath + "/objects"

    @Test func resourceKeysAreTheMetPathAndTheSortedQuery() {
        #expect(MetResource.object(id: 436_535).cacheKey == "/public/collection/v1/objects/436535")
        #expect(MetResource.departments.cacheKey == "/public/collection/v1/departments")
        #expect(
            MetResource.objectList(departmentIds: [], metadataDate: nil).cacheKey == "/public/collection/v1/objects")
        #expect(
            MetResource.objectList(departmentIds: [1, 3], metadataDate: "2024-01-02").cacheKey
                == "/public/collection/v1/objects?departmentIds=1|3&metadataDate=2024-01-02")
    }

    @Test func anObjectsKeyIsRecognizedOnlyWhenItIsExactlyThatObjectsKey() {
        #expect(MetResource.isObjectKey(MetResource.object(id: 436_535).cacheKey, id: 436_535))
        #expect(MetResource.isObjectKey(MetResource.object(id: 1).cacheKey, id: 1))
        for other in [
            "/public/collection/v1/objects/43653", "/public/collection/v1/objects/4365350",
            "/public/collection/v1/objects/0436535", "/public/collection/v1/objects/+436535",
            "/public/collection/v1/objects/436535?x", "/public/collection/v1/object/436535", "436535", "",
            "/public/collection/v1/objects/", "/public/collection/v2/objects/436535",
        ] {
            #expect(!MetResource.isObjectKey(other, id: 436_535), "\(other)")
        }
    }

    @Test(arguments: [
        "?departmentIds=3|1", "?departmentIds=1|3", "?departmentIds=3|1|3|1", "?departmentIds=1%7C3",
        "?departmentIds=3%7c1", "?departmentIds=1|1|3&ignored=x", "?departmentIds=3&departmentIds=1",
        "?departmentIds=3|1&departmentIds=1", "?departmentIds=1&departmentIds=&departmentIds=3",
    ])
    func departmentIdsInAnyOrderOrRepeatedShareOneKey(query: String) async throws {
        let key = try #require(await Harness.plannedKey(for: Self.list + query))
        #expect(key == MetResource.objectList(departmentIds: [1, 3], metadataDate: nil).cacheKey)
        #expect(key == Self.list + "?departmentIds=1|3")
    }

    @Test(arguments: [
        "?departmentIds=11|3&metadataDate=2024-01-02", "?metadataDate=2024-01-02&departmentIds=3|11",
    ])
    func parameterOrderDoesNotChangeTheKey(query: String) async throws {
        let key = try #require(await Harness.plannedKey(for: Self.list + query))
        #expect(key == Self.list + "?departmentIds=3|11&metadataDate=2024-01-02")
    }

    @Test(arguments: ["", "?", "?departmentIds=", "?metadataDate=", "?departmentIds=&metadataDate="])
    func emptyFiltersMeanTheWholeList(query: String) async throws {
        #expect(try #require(await Harness.plannedKey(for: Self.list + query)) == Self.list)
    }

    @Test func bothDepartmentRoutesShareOneKey() async throws {
        let ours = try #require(await Harness.plannedKey(for: "/departments"))
        let mirror = try #require(await Harness.plannedKey(for: "/public/collection/v1/departments"))
        #expect(ours == mirror)
    }

    @Test(arguments: ["0", "-1", "+1", "1||3", "1|", "|1", "a", "1,3", "1 3", "99999999999999999999"])
    func malformedDepartmentIdsAre400InTheMetsDialect(value: String) throws {
        let harness = Harness()
        for query in [
            "?departmentIds=" + PercentEncoding.encode(value),
            "?departmentIds=1&departmentIds=" + PercentEncoding.encode(value),
        ] {
            let response = try #require(harness.getImmediately(Self.list + query))
            #expect(response.status == 400)
            #expect(response.headers["Content-Type"] == Response.jsonContentType)
            #expect((try response.jsonObject()["message"] as? String)?.hasPrefix("departmentIds must be") == true)
        }
        #expect(harness.upstream.calls.isEmpty)
    }

    @Test func equivalentMirrorRequestsShareOneEntryAndOneUpstreamCall() async {
        let upstream = FakeUpstream([Self.list + "?departmentIds=1|3": .json(Sample.objectList)])
        let harness = Harness(upstream: upstream)
        let first = await harness.get(Self.list + "?departmentIds=3|1")
        let second = await harness.get(Self.list + "?departmentIds=1|3|1")
        let third = await harness.get(Self.list + "?departmentIds=1%7C3&unknown=1")
        let statuses: [Int] = [first.status, second.status, third.status]
        #expect(statuses == [200, 200, 200])
        #expect(upstream.calls == [Self.list + "?departmentIds=1|3"])
        #expect(first.body == Array(Sample.objectList.utf8))
        #expect(third.body == first.body)
        #expect(third.headers["Cache-Status"]?.hasPrefix("TheMet; hit") == true)
        #expect(harness.service.engine.cache.statistics.entries == 1)
    }

    @Test func ourObjectRouteAndTheMirrorShareOneEntry() async {
        let upstream = FakeUpstream([Sample.objectKey(7): .json(Sample.object(7))])
        let harness = Harness(upstream: upstream)
        let ours = await harness.get("/objects/7")
        let mirror = await harness.get("/public/collection/v1/objects/7")
        #expect(ours.body == mirror.body)
        #expect(upstream.calls.count == 1)
    }
}
