// swift-tools-version:6.0
import PackageDescription

/// One set of compiler settings for every Swift target: Swift 6 language mode (strict concurrency),
/// and in release builds cross-module optimization: the engine's, the loop's and the grammar's
/// small functions and generics are then inlined and specialized in the product's modules that
/// call them on every request, as they were when all of it was one module.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

let package = Package(
    name: "TheMet",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "themet", targets: ["themet"]),
        .executable(name: "met-fixture-server", targets: ["met-fixture-server"]),
    ],
    targets: [
        .systemLibrary(name: "CLibevent", pkgConfig: "libevent", providers: [.apt(["libevent-dev"])]),
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // No pkgConfig: hiredis's .pc file adds a flag SwiftPM refuses; the headers are in the default path.
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        // HMAC-SHA256 from OpenSSL's libcrypto, which signs what a group's instances write to Redis.
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // libvips: decoding, resizing and encoding images (the IIIF Image API, the fixture art).
        // No pkgConfig: its flags carry -pthread, which SwiftPM refuses; the shim declares what it uses.
        .systemLibrary(name: "CVips", providers: [.apt(["libvips-dev"])]),
        // The one event-loop type: a libevent base on a named thread, jobs from any thread, timers,
        // an orderly stop. The HTTP loops, the curl loop and the Redis link are built on it.
        .target(name: "EventLoops", dependencies: ["CLibevent"], swiftSettings: swiftSettings),
        // What an image file's first bytes say: its format and pixel size, read without decoding.
        .target(name: "ImageHeaders", swiftSettings: swiftSettings),
        // Images through libvips: made, derived (MetEngine's ImageDeriver) and encoded, off the loop
        // threads.
        .target(
            name: "MetImaging", dependencies: ["CVips", "ImageHeaders", "MetEngine"], swiftSettings: swiftSettings),
        // The byte rules (tokens, unreserved, hex digits) the core and the HTTP reader share.
        .target(name: "HTTPGrammar", swiftSettings: swiftSettings),
        // The HTTP/1.1 reader (RFC 9112, strict) with its own error type; knows no core type.
        .target(name: "HTTPWire", dependencies: ["HTTPGrammar"], swiftSettings: swiftSettings),
        // The engine: requests and responses, pipelines and their driver, cache entries and tiers,
        // single flight, the upstream client's policy (pacer, breaker, retries). It knows the Met's
        // upstream resources (what to fetch), never this server's routes.
        .target(name: "MetEngine", dependencies: ["HTTPGrammar", "ImageHeaders"], swiftSettings: swiftSettings),
        // The product over the engine: the route table and every route, the presenter, search,
        // widget, random, IIIF, explorer, health and metrics pages, configuration, warm and sync.
        // No sockets, no HTTP codec, no fake Met, no terminal.
        .target(
            name: "MetCore",
            dependencies: ["MetEngine", "HTTPGrammar"],
            resources: [
                .embedInCode("Resources/openapi.yaml"), .embedInCode("Resources/explorer/index.html"),
                .embedInCode("Resources/explorer/explorer.js"), .embedInCode("Resources/explorer/explorer.css"),
                .embedInCode("Resources/explorer/favicon.svg"),
            ],
            swiftSettings: swiftSettings
        ),
        // The fake Met: met-fixture-server, the tests and the offline `--upstream DIR` mode.
        .target(
            name: "MetFixtures", dependencies: ["MetEngine", "MetCore", "MetImaging", "HTTPGrammar", "HTTPWire"],
            swiftSettings: swiftSettings),
        // gzip over libdeflate, for the cached entries' compressed copies.
        .target(name: "MetGzip", dependencies: ["CDeflate"], swiftSettings: swiftSettings),
        // The event loops (libevent): connections, the reader's errors as problem documents, the
        // encoded heads of shared responses.
        .target(
            name: "MetHTTP", dependencies: ["MetEngine", "HTTPWire", "HTTPGrammar", "CLibevent", "EventLoops"],
            swiftSettings: swiftSettings),
        // The persistent tier: cache entries in SQLite (WAL), one batching writer thread.
        .target(name: "MetDisk", dependencies: ["MetEngine", "CSQLite"], swiftSettings: swiftSettings),
        // The shared tier: Redis through hiredis's async API, on a libevent loop of its own.
        .target(
            name: "MetRedis", dependencies: ["MetEngine", "CHiredis", "CLibevent", "CCrypto", "EventLoops"],
            swiftSettings: swiftSettings),
        // The real Met over libcurl's multi interface, on its own libevent loop.
        .target(
            name: "MetUpstream", dependencies: ["MetEngine", "MetGzip", "CLibevent", "CCurl", "EventLoops"],
            swiftSettings: swiftSettings),
        // The server and the one-shot CLI commands: where the targets meet.
        .executableTarget(
            name: "themet",
            dependencies: [
                "EventLoops", "MetEngine", "MetCore", "MetDisk", "MetFixtures", "MetGzip", "MetHTTP", "MetImaging",
                "MetRedis", "MetUpstream",
            ],
            swiftSettings: swiftSettings),
        // The hit path timed in one process, without sockets (`Benchmarks/run` runs it).
        .executableTarget(
            name: "themet-hitbench",
            dependencies: [
                "HTTPWire", "MetEngine", "MetCore", "MetDisk", "MetFixtures", "MetGzip", "MetHTTP", "MetImaging",
            ],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "met-fixture-server",
            dependencies: ["EventLoops", "MetEngine", "MetCore", "MetFixtures", "MetGzip", "MetHTTP"],
            swiftSettings: swiftSettings
        ),
        // What the test targets share: a temporary directory, a log kept in memory, a manual clock,
        // blocking socket calls kept off the cooperative pool.
        .target(name: "TestKit", dependencies: ["MetEngine"], path: "Tests/TestKit", swiftSettings: swiftSettings),
        .testTarget(name: "HTTPWireTests", dependencies: ["HTTPWire", "HTTPGrammar"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ImageHeadersTests", dependencies: ["ImageHeaders", "MetImaging"], swiftSettings: swiftSettings),
        .testTarget(
            name: "MetHTTPTests",
            dependencies: ["MetHTTP", "MetEngine", "HTTPGrammar", "HTTPWire", "EventLoops", "TestKit"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "MetCoreTests",
            dependencies: [
                "MetCore", "MetEngine", "MetFixtures", "HTTPGrammar", "ImageHeaders", "MetImaging", "TestKit",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "MetDiskTests", dependencies: ["MetDisk", "MetEngine", "CSQLite", "TestKit"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "MetUpstreamTests", dependencies: ["MetUpstream", "MetEngine", "TestKit"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "MetRedisTests", dependencies: ["MetRedis", "MetEngine", "TestKit"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ThemetTests", dependencies: ["MetCore", "MetEngine", "themet"], swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "ImageHeaders", "MetCore", "MetEngine", "MetGzip", "themet", "met-fixture-server", "TestKit",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
