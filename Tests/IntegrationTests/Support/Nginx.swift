import Foundation
import TestKit

/// An nginx (Debian's `nginx-light`, which `make test` installs) running the README's reverse-proxy
/// server block in front of a themet: the documented set-up itself, with only its two addresses
/// changed (the LAN address to a loopback port, themet's port to the one it bound). Stopped when
/// released.
final class Nginx: Sendable {
    /// The loopback port nginx listens on.
    let port: Int
    private let process: Process
    private let directory: String

    /// Starts nginx in front of themet on `upstreamPort`, on a free loopback port (picked again if
    /// another process takes it first), and waits until it accepts connections.
    init(proxyingTo upstreamPort: Int) async throws {
        guard
            let executable = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
                .first(where: FileManager.default.isExecutableFile(atPath:))
        else { throw ProcessFailure("nginx is not installed (make test installs nginx-light)") }
        let block = try Self.readmeServerBlock()
        for _ in 0..<5 {
            let (socket, port) = try Loopback.bind(listening: false)
            close(socket)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("themet-nginx-\(UUID())").path
            try FileManager.default.createDirectory(atPath: directory + "/temp", withIntermediateDirectories: true)
            let server =
                block
                .replacingOccurrences(of: "listen 192.168.1.10:80;", with: "listen 127.0.0.1:\(port);")
                .replacingOccurrences(of: "http://127.0.0.1:8080", with: "http://127.0.0.1:\(upstreamPort)")
            let configuration = """
                daemon off;
                master_process off;
                pid \(directory)/nginx.pid;
                error_log \(directory)/error.log warn;
                events { worker_connections 256; }
                http {
                    access_log off;
                    client_body_temp_path \(directory)/temp/body;
                    proxy_temp_path \(directory)/temp/proxy;
                    fastcgi_temp_path \(directory)/temp/fastcgi;
                    uwsgi_temp_path \(directory)/temp/uwsgi;
                    scgi_temp_path \(directory)/temp/scgi;
                \(server)
                }
                """
            // Written in place: the file is new, and Foundation's atomic write leaves an empty
            // directory of its own in the system's temporary directory each time.
            try configuration.write(toFile: directory + "/nginx.conf", atomically: false, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["-p", directory, "-c", directory + "/nginx.conf", "-e", directory + "/error.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<500 where process.isRunning {
                if let socket = try? RawConnection.connect(port: port, readTimeout: 1) {
                    close(socket)
                    self.port = port
                    self.process = process
                    self.directory = directory
                    return
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        throw ProcessFailure("nginx did not start")
    }

    // SIGKILL: nginx without its master process never unblocks the signals the test process's
    // threads block, which it inherits, so SIGTERM would wait forever.
    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The `server { … }` block of the README's nginx example (its first ```nginx block).
    static func readmeServerBlock() throws -> String {
        let readme = try String(
            contentsOf: BuiltProducts.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "```nginx\n"),
            let end = readme.range(of: "```", range: start.upperBound..<readme.endIndex)
        else { throw ProcessFailure("the README has no nginx example") }
        return String(readme[start.upperBound..<end.lowerBound])
    }
}
