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
        .target(name: "HTTPGrammar", swiftSettings: swiftSettings),
        .target(name: "HTTPWire", dependencies: ["HTTPGrammar"], swiftSettings: swiftSettings),
        .target(
            name: "MetCore",
            dependencies: ["HTTPGrammar"],
            resources: [.embedInCode("Resources/openapi.yaml")],
            swiftSettings: swiftSettings
        ),
        .target(name: "MetFixtures", dependencies: ["MetCore"], swiftSettings: swiftSettings),
        .target(name: "MetGzip", dependencies: ["CZlib"], swiftSettings: swiftSettings),
        .target(
            name: "MetHTTP", dependencies: ["MetCore", "HTTPWire", "HTTPGrammar", "CLibevent"],
            swiftSettings: swiftSettings),
        .target(
            name: "MetUpstream", dependencies: ["MetCore", "CLibevent", "CCurl"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "themet", dependencies: ["MetCore", "MetFixtures", "MetGzip", "MetHTTP", "MetUpstream"],
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
        .testTarget(name: "ThemetTests", dependencies: ["MetCore", "themet"], swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["MetCore", "themet", "met-fixture-server"],
            swiftSettings: swiftSettings
        ),
    ]
)
