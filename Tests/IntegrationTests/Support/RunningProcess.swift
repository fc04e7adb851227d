import Foundation
import MetCore
import MetEngine
import TestKit

/// A child process started for a test: its standard output is scanned for the
/// `listening on http://HOST:PORT` line, and its standard error is kept for assertions.
final class RunningProcess: Sendable {
    private let process: Process
    private let output = Locked(String())
    private let errors = Locked(String())
    /// The port the process printed.
    let port: Int

    /// Starts `executable` with `arguments` and waits (without blocking a cooperative thread)
    /// until it prints its listening line; throws if it exits first or takes over 30 s.
    init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) async throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = BuiltProducts.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        let output = self.output
        let errors = self.errors
        let listening = AsyncStream<Int?>.makeStream()
        // Plain blocking reads on threads of their own: FileHandle's readabilityHandler can crash
        // libdispatch when the handle is released while its source is still armed.
        Self.readLines(from: stdout) { data in
            guard let data else {
                listening.continuation.yield(nil)
                return
            }
            let text = output.withLock {
                $0 += String(decoding: data, as: UTF8.self)
                return $0
            }
            if let range = text.range(of: #"listening on http://[^\s]+:(\d+)"#, options: .regularExpression) {
                listening.continuation.yield(Int(text[range].split(separator: ":").last ?? ""))
            }
        }
        Self.readLines(from: stderr) { data in
            if let data { errors.withLock { $0 += String(decoding: data, as: UTF8.self) } }
        }
        process.terminationHandler = { _ in listening.continuation.yield(nil) }
        try process.run()
        self.process = process
        let timeout = Task {
            try await Task.sleep(for: .seconds(30))
            listening.continuation.yield(nil)
        }
        defer { timeout.cancel() }
        var found: Int?
        for await port in listening.stream {
            found = port
            break
        }
        guard let found else {
            process.terminate()
            throw ProcessFailure(
                "\(executable.lastPathComponent) \(arguments.joined(separator: " ")) did not start: "
                    + errors.withLock { $0 })
        }
        port = found
    }

    /// `http://127.0.0.1:PORT`.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Everything written to standard error so far.
    var standardError: String { errors.withLock { $0 } }

    /// Whether the process is still running.
    var isRunning: Bool { process.isRunning }

    /// The resident set size now, in bytes (VmRSS in /proc), or nil once the process is gone.
    var residentBytes: Int? { status("VmRSS:") }

    /// The most the resident set has been since the process started, in bytes (VmHWM in /proc).
    var peakResidentBytes: Int? { status("VmHWM:") }

    /// A figure in kB of /proc/PID/status, in bytes.
    private func status(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes * 1_024
    }

    /// Sends `signal` (SIGTERM by default).
    func signal(_ number: Int32 = SIGTERM) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the process to exit and returns its status, or nil after `timeout` seconds. The
    /// default is generous: under ThreadSanitizer on two cores, a server's orderly exit (its loops
    /// drained, then the sanitizer's own pause at exit) has taken longer than 15 s beside other tests.
    func waitForExit(timeout: Double = 60) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
    }

    /// Kills the process if it still runs (SIGKILL; Foundation reaps it).
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    deinit { stop() }

    /// Reads `pipe` on a dedicated thread until EOF, handing each chunk to `consume`, then nil.
    private static func readLines(from pipe: Pipe, _ consume: @escaping @Sendable (Data?) -> Void) {
        let descriptor = pipe.fileHandleForReading.fileDescriptor
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                consume(Data(buffer[0..<count]))
            }
            consume(nil)
            withExtendedLifetime(pipe) {}
        }
        thread.start()
    }
}
