import Foundation
import Testing

@Suite("themet's signals and its port")
struct ProcessSignalAndPortTests {
    @Test func hangUpAndUserSignalsAreLoggedAndIgnoredThenSIGTERMStops() async throws {
        let servers = try await Servers.start()
        for (number, name, said) in [
            (SIGHUP, "SIGHUP", "no access log file to reopen"), (SIGUSR1, "SIGUSR1", "ignored"),
            (SIGUSR2, "SIGUSR2", "ignored"),
        ] {
            servers.themet.signal(number)
            // The log line says the signal arrived, so the request below comes after it.
            for _ in 0..<250 where !servers.themet.standardError.contains("received \(name)") {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(servers.themet.standardError.contains("received \(name): \(said)"))
            #expect(try await servers.get("/health").status == 200)
            #expect(servers.themet.isRunning)
        }
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
    }

    @Test func aPortAnotherServerHoldsExits69NamingItAndTheFirstKeepsServing() async throws {
        let servers = try await Servers.start()
        let port = servers.themet.port
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("themet-port-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let second = try await ThemetCommand.run([
            "serve", "--port", String(port), "--upstream", servers.fake.baseURL, "--data-dir", directory,
        ])
        #expect(second.status == 69, "standard error: \(second.errorText)")
        let lines = second.errorText.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains(":\(port):") == true)
        #expect(lines.first?.contains("already in use") == true)
        #expect(second.output.isEmpty)  // never printed a listening line

        // Every request still reaches the first server: nothing joined its socket group.
        for _ in 0..<20 { #expect(try await servers.get("/health").status == 200) }
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
    }
}
