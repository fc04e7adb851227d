import Foundation
import MetCore
import MetDisk
import MetEngine
import MetGzip
import MetHTTP
import MetImaging
import MetRedis
import MetUpstream

// themet: parse the configuration, build the core and the HTTP layer, serve, drain on a signal.
// `themet search|timeline|open …` answers one request through the same core and prints it.

var arguments = Array(CommandLine.arguments.dropFirst())

/// Prints `message` as the one line a usage error gets, and exits 64 (EX_USAGE).
func exitForUsage(_ message: String) -> Never {
    FileHandle.standardError.write(Data("themet: \(message)\n".utf8))
    exit(64)
}

// Flags before `--` only: what follows it is arguments (a search for "--help" included).
let options = arguments.prefix { $0 != "--" }
// The manual page and the completion, made from the tables --help prints; they take nothing.
if let first = arguments.first, first == "man" || first == "completion", !options.contains("--help"),
    !options.contains("-h")
{
    guard arguments.count == 1 else { exitForUsage("\(first) takes no arguments; see themet help \(first)") }
    print(first == "man" ? ManualPage.text : CompletionScript.text, terminator: "")
    exit(0)
}
if arguments.first == "help" {
    guard arguments.count <= 2 else { exitForUsage("help takes one command name; see themet --help") }
    guard let name = arguments.dropFirst().first else {
        print(Commands.overview)
        exit(0)
    }
    guard let usage = Commands.usage(of: name) else { exitForUsage("no command '\(name)'; see themet --help") }
    print(usage)
    exit(0)
}
if options.contains("--version") || options.contains("-V") {
    print("themet \(MetService.version)")
    exit(0)
}
let routeCommand = arguments.first.flatMap(RouteCommands.named)
let isSync = arguments.first == "sync"
let isWarm = arguments.first == "warm"
let isServe = arguments.first == "serve"
let isReindex = arguments.first == "reindex"
let isConfig = arguments.first == "config"
let snapshotCommand = arguments.first.flatMap { $0 == "export" || $0 == "import" ? $0 : nil }
if options.contains("--help") || options.contains("-h") {
    let named = arguments.first.flatMap(Commands.usage)
    print(named ?? Commands.overview)
    exit(0)
}
if isServe || routeCommand != nil || isSync || isWarm || isReindex || isConfig || snapshotCommand != nil {
    arguments.removeFirst()
} else if let first = arguments.first, !first.hasPrefix("-") {
    exitForUsage("no command '\(first)'; the commands are \(Commands.all.map(\.name).joined(separator: ", "))")
}

var snapshotFile = ""
var snapshotPictures = false
if let snapshotCommand {
    do {
        let parsed = try SnapshotCommands.parse(arguments, command: snapshotCommand)
        snapshotFile = parsed.file
        snapshotPictures = parsed.pictures
        arguments = ["--log-level", "warning"] + parsed.server
    } catch {
        exitForUsage("\(error)")
    }
}

if isReindex { arguments = ["--log-level", "warning"] + arguments }

var commandTarget = ""
var warmSource: WarmCommand.Source?
var warmPictures: WarmPictures?
if isWarm {
    do {
        let parsed = try WarmCommand.parse(arguments)
        warmSource = parsed.source
        warmPictures = parsed.pictures
        arguments = ["--log-level", "warning"] + parsed.server
    } catch {
        exitForUsage("\(error)")
    }
}
if let routeCommand {
    do {
        let parsed = try routeCommand.parse(arguments)
        commandTarget = parsed.target
        // Quiet by default: the JSON goes to standard output, and a failure is said in one line of
        // standard error (the upstream's warnings would only repeat it); --log-level or
        // THEMET_LOG_LEVEL shows more.
        let levelGiven = ProcessInfo.processInfo.environment["THEMET_LOG_LEVEL"] != nil
        arguments = (levelGiven ? [] : ["--log-level", "error"]) + parsed.server
    } catch {
        exitForUsage("\(error)")
    }
}

let configuration: ServerConfiguration
let upstream: any Upstream
let imageUpstream: (any Upstream)?
let groupSecret: String?
do {
    let environment = ProcessInfo.processInfo.environment
    let file = try ConfigurationFile.load(arguments: arguments, environment: environment)
    let resolved = try ServerConfiguration.resolve(
        arguments: arguments, environment: environment, processorCount: ProcessInfo.processInfo.activeProcessorCount,
        file: file)
    if isConfig {
        _ = try resolved.configuration.groupSecret()
        print(ConfigCommand.text(origins: resolved.origins, file: file), terminator: "")
        exit(0)
    }
    configuration = resolved.configuration
    try configuration.prepareDataDirectory()
    upstream = try configuration.makeUpstream()
    imageUpstream = try configuration.makeImageUpstream()
    groupSecret = try configuration.groupSecret()
} catch {
    exitForUsage("\(error)")
}

let logger = Logger(
    level: configuration.logging.level, format: routeCommand == nil ? configuration.logging.format : .bare)
// The snapshot commands and reindex use the data directory alone: no upstream, no engine.
if isReindex { exit(ReindexCommand.run(configuration: configuration, logger: logger)) }
switch snapshotCommand {
case "export"?:
    exit(
        SnapshotCommands.export(
            to: snapshotFile, pictures: snapshotPictures, configuration: configuration, logger: logger))
case "import"?: exit(await SnapshotCommands.importing(snapshotFile, configuration: configuration, logger: logger))
default: break
}
let disk =
    configuration.cache.diskSize > 0
    ? DiskCache.open(
        directory: configuration.cache.dataDirectory, capacity: configuration.cache.diskSize, logger: logger)
    : nil
// One-shot commands other than warm never fetch pictures: their files stay closed.
let imageFiles =
    configuration.images.cacheSize > 0 && routeCommand == nil && !isSync
    ? ImageFileTier.open(
        directory: configuration.cache.dataDirectory, capacity: configuration.images.cacheSize, logger: logger)
    : nil
let shared: RedisTier?
if let address = configuration.redis.address {
    do {
        shared = try RedisTier(
            address: address, prefix: configuration.redis.prefix, timeout: configuration.redis.timeout,
            downNotice: "serving from this instance's tiers, pacing it at \(configuration.fallbackRate) request(s)/s",
            secret: groupSecret, recordLimit: configuration.sharedRecordLimit, time: SystemTime(), logger: logger)
        if groupSecret == nil {
            logger.info(
                "redis: no --redis-secret: the group trusts whoever can write to \(address); set the same secret "
                    + "on every instance to sign what they share")
        }
    } catch {
        exitForUsage("--redis: \(error)")
    }
} else {
    shared = nil
}
let engine = CacheEngine(
    configuration: configuration, upstream: upstream, disk: disk, shared: shared, imageUpstream: imageUpstream,
    imageFiles: imageFiles, deriver: VipsDeriver(), time: SystemTime(), logger: logger, compress: { Gzip.compress($0) })

if let warmSource {
    Task {
        let status = await WarmCommand.run(
            warmSource,
            warmer: Warmer(engine: engine, searchAPI: configuration.upstream.searchAPI, pictures: warmPictures))
        disk?.close()  // everything fetched reaches the persistent cache, Ctrl-C or not
        imageFiles?.close()  // and every picture fetched, the picture files
        exit(status)
    }
    dispatchMain()
}

if isSync {
    Task {
        let status = await SyncCommand.run(Synchronizer(engine: engine, configuration: configuration))
        disk?.close()  // the refreshed entries reach the persistent cache before the process ends
        exit(status)
    }
    dispatchMain()
}

let service = MetService(
    configuration: configuration, engine: engine, openAPI: OpenAPIDocument.bytes, compress: { Gzip.compress($0) })
service.store.load()

if routeCommand != nil {
    Task {
        let status = await RouteCommands.run(
            target: commandTarget, service: service, pretty: isatty(1) == 1, progress: isatty(2) == 1)
        service.store.waitForWrites()  // the process ends here: the latest results must reach objects.json
        disk?.close()  // and what it fetched, the persistent cache
        exit(status)
    }
    dispatchMain()
}

var httpConfiguration = HTTPServerConfiguration(configuration.http)
do {
    // Access lines are info lines: a server at --log-level warning writes none.
    httpConfiguration.accessLog =
        configuration.logging.level <= .info
        ? try AccessLog.open(configuration.logging.accessLog, format: configuration.logging.format) : nil
} catch {
    exitForUsage("--access-log: \(error)")
}
do {
    try ShutdownSignal.ignoreOthers(logger: logger, accessLog: httpConfiguration.accessLog)
} catch {
    FileHandle.standardError.write(Data("themet: cannot watch signals: \(error)\n".utf8))
    exit(69)
}
let server = HTTPServer(configuration: httpConfiguration, responder: service, logger: logger)
let address: HTTPServer.Address
do {
    address = try server.start()
} catch {
    FileHandle.standardError.write(
        Data("themet: cannot listen on \(configuration.http.host):\(configuration.http.port): \(error)\n".utf8))
    exit(69)
}
// A Redis hit is then read and answered on the loop that asked (one round trip, no thread between).
shared?.attach(to: server.eventLoops)
logger.info(
    "themet \(MetService.version): \(configuration.http.loops) loop(s), upstream \(upstream.location), "
        + "data in \(configuration.cache.dataDirectory)")
// Signals are handled before the address is announced: whoever reads it may signal at once.
do {
    try ShutdownSignal.onReceipt { signal in
        logger.info("signal \(signal): draining for up to \(configuration.http.shutdownTimeout) s")
        server.shutdown(gracePeriod: configuration.http.shutdownTimeout)
        service.store.waitForWrites()  // the latest results reach objects.json before the process ends
        disk?.close()  // and the entries still queued, the persistent cache
        imageFiles?.close()  // and the pictures' files and use marks
        logger.info("stopped")
        exit(0)
    }
} catch {
    FileHandle.standardError.write(Data("themet: cannot watch signals: \(error)\n".utf8))
    exit(69)
}
if configuration.cache.syncInterval > 0 {
    SyncCommand.schedule(
        Synchronizer(engine: engine, configuration: configuration), every: configuration.cache.syncInterval,
        logger: logger)
}
if UpstreamProbe.applies(to: configuration.upstream.location),
    case .origin(let origin) = configuration.upstream.location
{
    Task { await UpstreamProbe.run(service, origin: origin, logger: logger) }
}

print("listening on \(address.url)")
fflush(nil)  // stdout is a pipe under tests; the line must go out now
dispatchMain()
