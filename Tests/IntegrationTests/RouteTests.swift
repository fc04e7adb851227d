import Foundation
import Testing

@Suite("Other routes, the mirror, methods and CORS")
struct RouteTests {
    @Test func departmentsHealthAndSpec() async throws {
        let servers = try await Servers.start()
        let departments = try await servers.get("/departments")
        #expect(departments.status == 200)
        #expect((try departments.json()["departments"] as? [Any])?.count == 19)

        let health = try await servers.get("/health")
        #expect(health.status == 200)
        let json = try health.json()
        #expect(json["status"] as? String == "ok")
        #expect((json["cache"] as? [String: Any])?["misses"] as? Int == 1)
        #expect((json["upstream"] as? [String: Any])?["state"] as? String == "ok")

        let spec = try await servers.get("/openapi.yaml")
        #expect(spec.status == 200)
        #expect(String(decoding: spec.body, as: UTF8.self).hasPrefix("openapi: 3.1"))
    }

    @Test func gzipDepartmentsInflateToTheIdentityBody() async throws {
        let servers = try await Servers.start()
        let request = "GET /departments HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n"
        let raw = try await RawHTTP.exchange(port: servers.themet.port, request: Array(request.utf8))
        #expect(raw.text.hasPrefix("HTTP/1.1 200"))
        #expect(raw.text.contains("Content-Encoding: gzip"))
        let identity = try await servers.get("/departments", headers: ["Accept-Encoding": "identity"])
        #expect(identity.header("Content-Encoding") == nil)
        #expect(try await Gunzip.inflate(try raw.body()) == [UInt8](identity.body))
    }

    @Test func mirrorSpeaksTheMetsDialect() async throws {
        let servers = try await Servers.start()
        let object = try await servers.get("/public/collection/v1/objects/45734")
        #expect(object.status == 200)
        #expect(try object.json()["objectID"] as? Int == 45734)

        let missing = try await servers.get("/public/collection/v1/objects/999999999")
        #expect(missing.status == 404)
        #expect(try missing.json()["message"] as? String == "ObjectID not found")

        let unparsable = try await servers.get("/public/collection/v1/objects/abc")
        #expect(unparsable.status == 400)
        #expect(try unparsable.json()["message"] as? String == "could not parse objectID")

        let list = try await servers.get("/public/collection/v1/objects?departmentIds=3")
        #expect(list.status == 200)
        #expect(try list.json()["total"] as? Int == 6222)

        let departments = try await servers.get("/public/collection/v1/departments")
        #expect(departments.status == 200)
        // The native and mirror routes share one cache entry.
        _ = try await servers.get("/departments")
        #expect(try await servers.upstreamStats().paths["/public/collection/v1/departments"] == 1)
    }

    @Test func methodsAndPreflight() async throws {
        let servers = try await Servers.start()
        let post = try await servers.get("/objects/1", method: "POST")
        #expect(post.status == 405)
        #expect(post.header("Allow") == "GET, HEAD, OPTIONS")
        #expect(try post.json()["code"] as? String == "method_not_allowed")

        let preflight = try await servers.get(
            "/objects/1", method: "OPTIONS",
            headers: [
                "Origin": "https://app.example", "Access-Control-Request-Method": "GET",
            ])
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == "*")
        #expect(preflight.header("Access-Control-Allow-Methods")?.contains("GET") == true)

        let unknown = try await servers.get("/nope")
        #expect(unknown.status == 404)
        #expect(try unknown.json()["code"] as? String == "route_not_found")
    }
}
