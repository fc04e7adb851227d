// swift-tools-version:6.0
import PackageDescription

/// One set of compiler settings for every Swift target: Swift 6 language mode (strict concurrency).
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6)
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
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // No pkgConfig: hiredis's .pc file adds a flag SwiftPM refuses; the headers are in the default path.
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        // HMAC-SHA256 from OpenSSL's libcrypto, which signs what a group's instances write to Redis.
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // The byte rules (tokens, unreserved, hex digits) the core and the HTTP reader share.
        .target(name: "HTTPGrammar", swiftSettings: swiftSettings),
        // The HTTP/1.1 reader (RFC 9112, strict) with its own error type; knows no core type.
        .target(name: "HTTPWire", dependencies: ["HTTPGrammar"], swiftSettings: swiftSettings),
        // Everything that decides: router, pipelines and their driver, cache tiers, presenter,
        // upstream policy. No sockets, no HTTP codec, no fake Met, no terminal.
        .target(
            name: "MetCore",
            dependencies: ["HTTPGrammar"],
            resources: [
                .embedInCode("Resources/openapi.yaml"), .embedInCode("Resources/explorer/index.html"),
                .embedInCode("Resources/explorer/explorer.js"), .embedInCode("Resources/explorer/explorer.css"),
                .embedInCode("Resources/explorer/favicon.svg"),
            ],
            swiftSettings: swiftSettings
        ),
        // The fake Met: met-fixture-server, the tests and the offline `--upstream DIR` mode.
        .target(name: "MetFixtures", dependencies: ["MetCore"], swiftSettings: swiftSettings),
        // gzip over zlib, for the cached entries' compressed copies.
        .target(name: "MetGzip", dependencies: ["CZlib"], swiftSettings: swiftSettings),
        // The event loops (libevent): connections, the reader's errors as problem documents, the
        // encoded heads of shared responses.
        .target(
            name: "MetHTTP", dependencies: ["MetCore", "HTTPWire", "HTTPGrammar", "CLibevent"],
            swiftSettings: swiftSettings),
        // The persistent tier: cache entries in SQLite (WAL), one batching writer thread.
        .target(name: "MetDisk", dependencies: ["MetCore", "CSQLite"], swiftSettings: swiftSettings),
        // The shared tier: Redis through hiredis's async API, on a libevent loop of its own.
        .target(
            name: "MetRedis", dependencies: ["MetCore", "CHiredis", "CLibevent", "CCrypto"],
            swiftSettings: swiftSettings),
        // The real Met over libcurl's multi interface, on its own libevent loop.
        .target(
            name: "MetUpstream", dependencies: ["MetCore", "CLibevent", "CCurl"], swiftSettings: swiftSettings),
        // The server and the one-shot CLI commands: where the targets meet.
        .executableTarget(
            name: "themet",
            dependencies: [
                "MetCore", "MetDisk", "MetFixtures", "MetGzip", "MetHTTP", "MetRedis", "MetUpstream",
            ],
            swiftSettings: swiftSettings),
        .executableTarget(
            name: "met-fixture-server",
            dependencies: ["MetCore", "MetFixtures", "MetGzip", "MetHTTP"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "HTTPWireTests", dependencies: ["HTTPWire", "HTTPGrammar"], swiftSettings: swiftSettings),
        .testTarget(
            name: "MetHTTPTests", dependencies: ["MetHTTP", "MetCore", "HTTPWire"], swiftSettings: swiftSettings),
        .testTarget(
            name: "MetCoreTests", dependencies: ["MetCore", "MetFixtures", "HTTPGrammar"], swiftSettings: swiftSettings),
        .testTarget(
            name: "MetDiskTests", dependencies: ["MetDisk", "MetCore", "CSQLite"], swiftSettings: swiftSettings),
        .testTarget(name: "MetRedisTests", dependencies: ["MetRedis", "MetCore"], swiftSettings: swiftSettings),
        .testTarget(name: "ThemetTests", dependencies: ["MetCore", "themet"], swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["MetCore", "themet", "met-fixture-server"],
            swiftSettings: swiftSettings
        ),
    ]
)
