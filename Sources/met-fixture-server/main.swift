import Foundation
import MetCore
import MetEngine
import MetFixtures
import MetGzip
import MetHTTP

// met-fixture-server: the fake Met API (Fixtures/ plus synthetic records) over real HTTP on loopback.

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    print(FixtureServerOptions.usage)
    exit(0)
}
let options: FixtureServerOptions
let archive: FixtureArchive
do {
    options = try FixtureServerOptions.parse(arguments)
} catch {
    FileHandle.standardError.write(Data("met-fixture-server: \(error)\n".utf8))
    exit(64)
}
do {
    archive = try FixtureArchive(directory: options.fixtures, syntheticCount: options.synthetic)
} catch {
    FileHandle.standardError.write(Data("met-fixture-server: --fixtures: \(error)\n".utf8))
    exit(64)
}

let logger = Logger(level: .warning)
let fake = FakeMet(archive: archive, options: options.fake, time: SystemTime(), compress: { Gzip.compress($0) })
let server = HTTPServer(
    configuration: HTTPServerConfiguration(
        host: "127.0.0.1", port: options.port, loops: 1, idleTimeout: 60,
        limits: RequestLimits()),
    responder: fake, logger: logger)
let address: HTTPServer.Address
do {
    address = try server.start()
} catch {
    FileHandle.standardError.write(Data("met-fixture-server: \(error)\n".utf8))
    exit(69)
}
// Signals are caught before the address is announced: whoever reads it may signal at once.
do {
    try ShutdownSignal.onReceipt { _ in
        server.shutdown(gracePeriod: 1)
        exit(0)
    }
} catch {
    FileHandle.standardError.write(Data("met-fixture-server: cannot watch signals: \(error)\n".utf8))
    exit(69)
}
print("listening on \(address.url)")
fflush(nil)  // stdout is a pipe under tests; the line must go out now
dispatchMain()
