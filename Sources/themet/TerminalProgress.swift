import Foundation

/// A progress line on standard error when it is a terminal: `verb done/total records`, rewritten
/// in place; nothing otherwise (a pipe or a log file gets the command's last line only).
final class TerminalProgress {
    private let verb: String
    private let isTerminal = isatty(2) != 0
    private var shown = false

    init(verb: String) { self.verb = verb }

    func report(_ done: Int, _ total: Int) {
        guard isTerminal else { return }
        shown = true
        FileHandle.standardError.write(Data("\r\(verb) \(done)/\(total) records".utf8))
    }

    /// Ends the line, if one was shown.
    func end() {
        guard shown else { return }
        FileHandle.standardError.write(Data("\n".utf8))
        shown = false
    }
}
