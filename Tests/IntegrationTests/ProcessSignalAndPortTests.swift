import Foundation
import Testing

@Suite("themet's signals and its port")
struct ProcessSignalAndPortTests {
    @Test func hangUpAndUserSignalsAreLoggedAndIgnoredThenSIGTERMStops() async throws {
        let servers = try await Servers.start()
        for (number, name) in [(SIGHUP, "SIGHUP"), (SIGUSR1, "SIGUSR1"), (SIGUSR2, "SIGUSR2")] {
            servers.themet.signal(number)
            // The log line says the signal arrived, so the request below comes after it.
            for _ in 0..<250 where !servers.themet.standardError.contains("received \(name)") {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(servers.themet.standardError.contains("received \(name): ignored"))
            #expect(try await servers.get("/health").status == 200)
            #expect(servers.themet.isRunning)
        }
        servers.themet.signal(SIGTERM)
        #expect(await servers.themet.waitForExit() == 0)
    }
}
