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
    /// (SIGINT by default) after `interruptAfter`, or once its standard error shows
    /// `interruptOnceErrorsShow`, when given. Prefer the second: a loaded machine (or a sanitizer)
    /// can start the command more slowly than any fixed delay, and a signal sent before its
    /// handler is installed takes the default action, or is lost when the test runner inherited
    /// SIGINT ignored (a background job).
    static func run(
        _ arguments: [String], executable: URL = BuiltProducts.themet, interruptAfter: Duration? = nil,
        interruptOnceErrorsShow marker: String? = nil, signal: Int32 = SIGINT
    ) async throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = BuiltProducts.environment
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
        async let complained = BlockingIO.onThread {
            var read = Data()
            var sent = marker == nil
            while case let chunk = errors.fileHandleForReading.availableData, !chunk.isEmpty {
                read.append(chunk)
                if !sent, let marker, String(decoding: read, as: UTF8.self).contains(marker) {
                    kill(process.processIdentifier, signal)
                    sent = true
                }
            }
            return read
        }
        let (out, err) = await (printed, complained)
        let status = await BlockingIO.onThread {
            process.waitUntilExit()
            return process.terminationStatus
        }
        return Outcome(status: status, output: out, errors: err)
    }

}
