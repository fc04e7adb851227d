import Foundation
import TestKit
import Testing

/// `GET /changes` through the real binaries: what a `metadataDate` sync fetched anew is listed
/// after a client's cursor, exactly and in order, and a cursor that cannot be continued is a 410.
@Suite("The change feed")
struct ChangeFeedTests {
    /// The page at `target`'s JSON: its changes as `"{id} {change}"`, its `next`, its `more`.
    private static func page(_ target: String, from servers: Servers) async throws -> (
        changes: [String], next: String, more: Bool
    ) {
        let answer = try await servers.get(target)
        #expect(answer.status == 200, "\(target): \(String(decoding: answer.body, as: UTF8.self))")
        #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
        #expect(answer.header("Cache-Control") == "no-store")
        let json = try answer.json()
        let changes = (json["changes"] as? [[String: Any]] ?? []).map { change in
            #expect((change["fetchedAt"] as? String)?.hasSuffix("Z") == true)
            return "\(change["objectID"] as? Int ?? 0) \(change["change"] as? String ?? "")"
        }
        return (changes, try #require(json["next"] as? String), try #require(json["more"] as? Bool))
    }

    @Test func aSyncsChangesAndWithdrawalsAreListedAfterTheCursorExactlyAndInOrder() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "300"], themet: PersistenceTests.unpaced)
        // Cached records that the sync does not list anyway.
        let recent = try await SyncCommandTests.recentlyChanged(servers)
        let cached = Array((1...300).filter { !recent.contains($0) }.prefix(20))
        _ = try await PersistenceTests.fetch(cached.map { "/objects/\($0)" }, from: servers, width: 1)
        try await PersistenceTests.waitUntilCommitted(servers)
        let stored = try await Self.page("/changes?limit=1000", from: servers)
        #expect(stored.changes == cached.map { "\($0) stored" })
        #expect(stored.more == false)
        // Asked again from the cursor: nothing new, the same cursor back.
        #expect(try await Self.page("/changes?since=\(stored.next)", from: servers).changes == [])
        #expect(try await Self.page("/changes?since=\(stored.next)", from: servers).next == stored.next)

        let changed = [cached[2], cached[9], cached[15]]
        let withdrawn = cached[5]
        let uncached = try #require((1...300).first { !cached.contains($0) && !recent.contains($0) })
        for query in [(changed + [uncached]).map(String.init).joined(separator: ","), "\(withdrawn)&withdraw=true"] {
            let marked = try await HTTPClient.request(servers.fake.baseURL + "/__change?ids=\(query)", method: "POST")
            #expect(marked.status == 200)
        }
        // The sync runs beside the server, on its data directory.
        let sync = try await ThemetCommand.run(
            ["sync", "--upstream", servers.fake.baseURL, "--data-dir", servers.dataDirectory]
                + PersistenceTests.unpaced)
        #expect(sync.status == 0, "\(sync.errorText)")

        var listed: [String] = []
        var cursor = stored.next
        for _ in 0..<10 {
            let page = try await Self.page("/changes?since=\(cursor)&limit=3", from: servers)
            listed += page.changes
            cursor = page.next
            if !page.more { break }
        }
        #expect(listed.count == 4, "\(listed)")
        #expect(Set(listed) == Set(changed.map { "\($0) changed" } + ["\(withdrawn) withdrawn"]))
        let all = try await Self.page("/changes?limit=1000", from: servers)
        #expect(all.changes == stored.changes + listed)
        #expect(all.next == cursor)
        let latest = try await Self.page("/changes?since=latest", from: servers)
        #expect(latest.changes == [] && latest.next == cursor && latest.more == false)
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
    }

    @Test func aCursorThatCannotBeContinuedIsA410AndAMalformedRequestA400() async throws {
        let servers = try await Servers.start(fake: ["--synthetic", "50"], themet: PersistenceTests.unpaced)
        _ = try await servers.get("/objects/1")
        try await PersistenceTests.waitUntilCommitted(servers)
        let next = try await Self.page("/changes", from: servers).next
        let sequence = try #require(next.split(separator: "-").last)
        let log = String(try #require(next.split(separator: "-").first))
        let other = log == "0000000000000000" ? "0000000000000001" : "0000000000000000"
        for expired in ["\(other)-\(sequence)", "\(log)-\(Int(sequence)! + 5)"] {
            let answer = try await servers.get("/changes?since=\(expired)")
            #expect(answer.status == 410, "\(expired)")
            #expect(try answer.json()["code"] as? String == "cursor_expired")
            #expect(try answer.json()["parameter"] as? String == "since")
        }
        for (query, parameter) in [
            ("since=0", "since"), ("since=\(log)", "since"), ("since=\(log.uppercased())-1", "since"),
            ("since=\(log)-01", "since"), ("since=%00", "since"), ("since=\(next)&since=\(next)", "since"),
            ("limit=0", "limit"), ("limit=1001", "limit"), ("limit=-1", "limit"), ("limit=1e3", "limit"),
            ("limit=99999999999999999999", "limit"), ("limit=", "limit"), ("cursor=\(next)", "cursor"),
        ] {
            let answer = try await servers.get("/changes?\(query)")
            #expect(answer.status == 400, "\(query)")
            #expect(try answer.json()["parameter"] as? String == parameter, "\(query)")
        }
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
    }
}
