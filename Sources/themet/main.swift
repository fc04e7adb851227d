import Foundation
import MetCore
import MetHTTP

// themet: parse the configuration, build the core and the HTTP layer, serve, drain on a signal.

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "serve" { arguments.removeFirst() }
if arguments.contains("--help") || arguments.contains("-h") {
    print(ServerConfiguration.usage)
    exit(0)
}
if arguments.contains("--version") {
    print("themet \(MetService.version)")
    exit(0)
}

let configuration: ServerConfiguration
let upstream: any Upstream
do {
    configuration = try ServerConfiguration.parse(
        arguments: arguments, environment: ProcessInfo.processInfo.environment,
        processorCount: ProcessInfo.processInfo.activeProcessorCount)
    try configuration.prepareDataDirectory()
    upstream = try configuration.makeUpstream()
} catch {
    FileHandle.standardError.write(Data("themet: \(error)\n".utf8))
    exit(64)
}

let logger = Logger(level: configuration.logLevel)
let service = MetService(
    configuration: configuration, upstream: upstream, time: SystemTime(), logger: logger,
    openAPI: OpenAPIDocument.bytes, compress: { Gzip.compress($0) })
let server = HTTPServer(configuration: HTTPServerConfiguration(configuration), responder: service, logger: logger)

let address: HTTPServer.Address
do {
    address = try server.start()
} catch {
    FileHandle.standardError.write(
        Data("themet: cannot listen on \(configuration.host):\(configuration.port): \(error)\n".utf8))
    exit(69)
}
logger.info(
    "themet \(MetService.version): \(configuration.loops) loop(s), upstream \(upstream.location), data in \(configuration.dataDirectory)"
)
print("listening on \(address.url)")
fflush(nil)  // stdout is a pipe under tests; the line must go out now

ShutdownSignal.onReceipt { signal in
    logger.info("signal \(signal): draining for up to \(configuration.shutdownTimeout) s")
    server.shutdown(gracePeriod: configuration.shutdownTimeout)
    logger.info("stopped")
    exit(0)
}
dispatchMain()
