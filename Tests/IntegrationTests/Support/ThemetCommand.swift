import Foundation
import TestKit

/// `themet` run once as a command (`search`, `timeline`, `open`), to its end.
enum ThemetCommand {
    /// What one run left behind.
    struct Outcome: Sendable {
        /// The exit status.
        var status: Int32
        /// Everything written to standard output.
        var output: Data
        /// Everything written to standard error.
        var errors: Data

        /// Standard error as text, for failure messages.
        var errorText: String { String(decoding: errors, as: UTF8.self) }
    }

    /// Runs `themet` (or `executable`) with `arguments` to its end (killed after a minute), reading
    /// its output on threads of their own so the cooperative pool never blocks; sends it `signal`
    /// (SIGINT by default) after `interruptAfter` when given.
    static func run(
        _ arguments: [String], executable: URL = BuiltProducts.themet, interruptAfter: Duration? = nil,
        signal: Int32 = SIGINT
    ) async throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            process.terminate()
        }
        defer { watchdog.cancel() }
        let interrupter = Task {
            guard let interruptAfter else { return }
            try await Task.sleep(for: interruptAfter)
            kill(process.processIdentifier, signal)
        }
        defer { interrupter.cancel() }
        async let printed = BlockingIO.onThread { output.fileHandleForReading.readDataToEndOfFile() }
        async let complained = BlockingIO.onThread { errors.fileHandleForReading.readDataToEndOfFile() }
        let (out, err) = await (printed, complained)
        let status = await BlockingIO.onThread {
            process.waitUntilExit()
            return process.terminationStatus
        }
        return Outcome(status: status, output: out, errors: err)
    }

}
