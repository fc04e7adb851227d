import Foundation
import TestKit

/// gzip bodies inflated by the system's `gzip -dc`: the server's compression checked by another
/// implementation than the zlib calls that made it.
enum Gunzip {
    /// The bytes `compressed` decodes to. Throws when gzip refuses it (corrupt, truncated, not
    /// gzip). Runs on a thread of its own so the cooperative pool never blocks.
    static func inflate(_ compressed: [UInt8]) async throws -> [UInt8] {
        try await BlockingIO.onThread { Result { try run(compressed) } }.get()
    }

    /// gzip reads its input from a file rather than a pipe: nothing to feed while it writes, and
    /// no SIGPIPE if it stops reading early.
    private static func run(_ compressed: [UInt8]) throws -> [UInt8] {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("themet-gunzip-\(UUID().uuidString)")
        try Data(compressed).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-dc"]
        process.standardInput = try FileHandle(forReadingFrom: input)
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let inflated = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ProcessFailure("gzip -dc exited with \(process.terminationStatus)")
        }
        return [UInt8](inflated)
    }
}
