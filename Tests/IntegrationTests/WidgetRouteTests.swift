import Foundation
import Testing

@Suite("GET /widget/timeline and /open end to end")
struct WidgetRouteTests {
    /// themet flags that keep the pacer out of the way when a test fetches several objects.
    private static let unpaced = ["--upstream-rate", "1000", "--upstream-burst", "1000"]
    private static let start = "2026-11-29T18:00:00Z"
    private static let timeline = "/widget/timeline?start=\(start)"

    /// The response head of one raw exchange: what `curl -I` shows.
    private struct RawHead {
        var status: Int
        /// The header lines, as sent.
        var lines: [String]
        /// The head as sent, CR/LF included.
        var text: String

        func header(_ name: String) -> String? {
            lines.first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }
    }

    /// Sends `method target` on a connection of its own and reads the response head, without
    /// following redirects or tidying what came back.
    private static func raw(_ method: String, _ target: String, port: Int) async throws -> RawHead {
        let request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        let exchange = try await RawHTTP.exchange(port: port, request: Array(request.utf8))
        let text = exchange.text
        let head = String(text[..<(text.range(of: "\r\n\r\n")?.lowerBound ?? text.endIndex)])
        let lines = head.components(separatedBy: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? -1
        return RawHead(status: status, lines: Array(lines.dropFirst()), text: head)
    }

    /// The object IDs and dates of a timeline.
    private func entries(_ result: HTTPResult) throws -> (ids: [Int], dates: [String]) {
        let entries = try #require(try result.json()["entries"] as? [[String: Any]], "no entries")
        return (entries.compactMap { $0["objectID"] as? Int }, entries.compactMap { $0["date"] as? String })
    }

    @Test func aSearchFillsTheTimelineOneHourApartAndARestartKeepsItByteForByte() async throws {
        let servers = try await Servers.start(themet: Self.unpaced)
        let empty = try await servers.get(Self.timeline)
        #expect(empty.status == 200)
        #expect(try entries(empty).ids.isEmpty)
        #expect(try empty.json()["placeholder"] is [String: Any])

        let search = try await servers.get("/search?q=cypress")
        #expect(search.status == 200)
        let timeline = try await servers.get(Self.timeline)
        #expect(timeline.status == 200)
        #expect(timeline.header("Content-Type") == "application/json; charset=utf-8")
        let (ids, dates) = try entries(timeline)
        #expect(ids == [436_535, 437_980])
        #expect(dates == ["2026-11-29T18:00:00Z", "2026-11-29T19:00:00Z"])
        let first = try #require((try timeline.json()["entries"] as? [[String: Any]])?.first)
        #expect(first["widgetURL"] as? String == "themet://436535")
        #expect(first["openURL"] as? String == "/open/436535")
        #expect(first["title"] as? String == "Wheat Field with Cypresses")
        let large = try await servers.get(Self.timeline + "&family=large")
        #expect((try large.json()["entries"] as? [[String: Any]])?.first?["medium"] as? String == "Oil on canvas")
        let etag = try #require(timeline.header("ETag"))
        let calls = try await servers.upstreamStats().total

        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
        // Written off the loops; a stopping server finishes the write first.
        let stored = try #require(FileManager.default.contents(atPath: servers.dataDirectory + "/objects.json"))
        #expect((try JSONSerialization.jsonObject(with: stored) as? [Any])?.count == 2)
        let restarted = try await servers.restartingThemet(Self.unpaced)
        let again = try await restarted.get(Self.timeline)
        #expect(again.status == 200)
        #expect(again.body == timeline.body)
        #expect(again.header("ETag") == etag)
        #expect(try await restarted.get(Self.timeline, headers: ["If-None-Match": etag]).status == 304)
        #expect(try await restarted.get(Self.timeline + "&family=large").body == large.body)
        // The timeline came from objects.json: the Met was not asked again.
        #expect(try await restarted.upstreamStats().total == calls)
    }

    @Test func openRedirectsPublicDomainToTheDetailViewAndTheRestToTheMet() async throws {
        let servers = try await Servers.start(themet: Self.unpaced)
        let redirects = [
            ("/open/436535", "/objects/436535"), ("/open?url=themet://436535", "/objects/436535"),
            ("/open/1", "https://www.metmuseum.org/art/collection/search/1"),
            ("/open?url=themet%3A%2F%2F1", "https://www.metmuseum.org/art/collection/search/1"),
        ]
        for (target, location) in redirects {
            for method in ["GET", "HEAD"] {
                let head = try await Self.raw(method, target, port: servers.themet.port)
                #expect(head.status == 302, "\(method) \(target): \(head.text)")
                #expect(head.header("Location") == location)
                #expect(head.header("Cache-Control") == "no-cache")
            }
        }
        let json = try await servers.get("/open/1?format=json").json()
        #expect(json["objectID"] as? Int == 1)
        #expect(json["isPublicDomain"] as? Bool == false)
        #expect(json["target"] as? String == "web")
        #expect(json["location"] as? String == "https://www.metmuseum.org/art/collection/search/1")

        // A client that follows the relative redirect lands on the object.
        let followed = try await servers.get("/open/436535")
        #expect(followed.status == 200)
        #expect(try followed.json()["objectID"] as? Int == 436_535)

        let unknown = try await servers.get("/open/999999999")
        #expect(unknown.status == 404)
        #expect(try unknown.json()["code"] as? String == "object_not_found")

        // One upstream call per object, however often its link is opened.
        let stats = try await servers.upstreamStats()
        #expect(stats.paths["/public/collection/v1/objects/436535"] == 1)
        #expect(stats.paths["/public/collection/v1/objects/1"] == 1)
    }

    @Test func aConfiguredDetailURLAndPublicURLAreUsed() async throws {
        let servers = try await Servers.start(
            themet: Self.unpaced + [
                "--detail-url", "https://app.example/objects/{id}", "--public-url", "https://met.example/",
            ])
        let head = try await Self.raw("GET", "/open/436535", port: servers.themet.port)
        #expect(head.status == 302)
        #expect(head.header("Location") == "https://app.example/objects/436535")

        let timeline = try await servers.get("/widget/timeline?q=cypress&start=\(Self.start)")
        #expect(timeline.status == 200)
        let first = try #require((try timeline.json()["entries"] as? [[String: Any]])?.first)
        #expect(first["openURL"] as? String == "https://met.example/open/436535")
        #expect(try timeline.json()["source"] as? String == "search")
        #expect(try entries(timeline).ids == [436_535, 437_980])
    }

    /// Hostile deep links, sent as a client would: percent-encoded CR/LF and header lines, other schemes.
    private static let hostile = [
        "/open?url=themet://1%0D%0ASet-Cookie:%20injected=1",
        "/open?url=themet%3A%2F%2F1%0D%0ASet-Cookie%3A%20injected%3D1",
        "/open?url=themet://1%0ASet-Cookie:%20injected=1", "/open?url=themet://1%0D%0ALocation:%20https://evil.example",
        "/open?url=javascript:alert(document.cookie)", "/open?url=javascript%3Aalert(1)",
        "/open?url=https://evil.example/", "/open?url=themet://1/../x", "/open/1%0D%0ASet-Cookie:%20injected=1",
        "/open/1?format=json%0D%0ASet-Cookie:%20injected=1",
    ]

    @Test func hostileLinksGetA400AndNoInjectedHeaderLines() async throws {
        let servers = try await Servers.start()
        for target in Self.hostile {
            for method in ["HEAD", "GET"] {
                let head = try await Self.raw(method, target, port: servers.themet.port)
                #expect(head.status == 400, "\(method) \(target): \(head.text)")
                #expect(head.header("Location") == nil)
                #expect(head.header("Set-Cookie") == nil)
                #expect(!head.text.contains("injected") && !head.text.contains("evil.example"))
                // Every line ends in CR/LF: no bare LF or CR split a header in two.
                #expect(head.lines.allSatisfy { !$0.contains("\n") && !$0.contains("\r") })
                #expect(head.lines.allSatisfy { $0.contains(": ") })
            }
        }
        #expect(try await servers.upstreamStats().total == 0)
    }

    @Test func theCommandLinePrintsTheTimelineAndWhereALinkLeads() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("themet-widget-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = ["--upstream", BuiltProducts.fixtures.path, "--data-dir", directory]

        let empty = try await ThemetCommand.run(["timeline"] + server)
        #expect(empty.status == 0, "standard error: \(empty.errorText)")
        let placeholder = try #require(try JSONSerialization.jsonObject(with: empty.output) as? [String: Any])
        #expect((placeholder["entries"] as? [Any])?.isEmpty == true)
        #expect(placeholder["placeholder"] is [String: Any])

        #expect(try await ThemetCommand.run(["search", "cypress"] + server).status == 0)
        let filled = try await ThemetCommand.run(["timeline", "--family", "large", "--start", Self.start] + server)
        #expect(filled.status == 0, "standard error: \(filled.errorText)")
        let timeline = try #require(try JSONSerialization.jsonObject(with: filled.output) as? [String: Any])
        let entries = try #require(timeline["entries"] as? [[String: Any]])
        #expect(entries.compactMap { $0["objectID"] as? Int } == [436_535, 437_980])
        #expect(entries.compactMap { $0["date"] as? String } == ["2026-11-29T18:00:00Z", "2026-11-29T19:00:00Z"])
        #expect(timeline["family"] as? String == "large")

        let searched = try await ThemetCommand.run(["timeline", "--q", "cypress", "--limit", "1"] + server)
        #expect(searched.status == 0, "standard error: \(searched.errorText)")
        let fromSearch = try #require(try JSONSerialization.jsonObject(with: searched.output) as? [String: Any])
        #expect((fromSearch["entries"] as? [[String: Any]])?.compactMap { $0["objectID"] as? Int } == [436_535])

        let open = try await ThemetCommand.run(["open", "436535"] + server)
        #expect(open.status == 0, "standard error: \(open.errorText)")
        let detail = try #require(try JSONSerialization.jsonObject(with: open.output) as? [String: Any])
        #expect(detail["objectID"] as? Int == 436_535)
        #expect(detail["isPublicDomain"] as? Bool == true)
        #expect(detail["target"] as? String == "detail")
        #expect(detail["location"] as? String == "/objects/436535")

        let web = try await ThemetCommand.run(["open", "1"] + server)
        #expect(web.status == 0, "standard error: \(web.errorText)")
        let page = try #require(try JSONSerialization.jsonObject(with: web.output) as? [String: Any])
        #expect(page["target"] as? String == "web")
        #expect(page["location"] as? String == "https://www.metmuseum.org/art/collection/search/1")

        let bad = try await ThemetCommand.run(["open", "abc"] + server)
        #expect(bad.status == 64)
        #expect(bad.output.isEmpty)
        #expect(bad.errorText.hasPrefix("themet: 'abc' is not an object ID"))
        let absent = try await ThemetCommand.run(["open", "999999999"] + server)
        #expect(absent.status == 1, "\(absent.errorText)")
        #expect(absent.errorText.hasPrefix("themet: The Met has no object 999999999"))
        #expect(try await ThemetCommand.run(["open"] + server).status == 64)
    }
}
