import MetCore
import MetEngine

/// Every command of `themet`, for `themet --help` and `themet help COMMAND`.
enum Commands {
    /// One command: its name, what it does in a line, and its usage text.
    struct Command {
        let name: String
        let summary: String
        let usage: String
    }

    static let all: [Command] = [
        Command(
            name: "serve", summary: "Run the HTTP server (the default command).", usage: ServerConfiguration.usage),
        Command(name: "search", summary: "One hydrated search, printed as JSON.", usage: SearchCommand.usage),
        Command(name: "timeline", summary: "The widget timeline, printed as JSON.", usage: TimelineCommand.usage),
        Command(name: "open", summary: "Where an object's deep link leads.", usage: OpenCommand.usage),
        Command(
            name: "warm", summary: "Fill the cache for a search, a department or a list of IDs.",
            usage: WarmCommand.usage),
        Command(name: "sync", summary: "Refresh the cached records the Met changed.", usage: SyncCommand.usage),
        Command(
            name: "export", summary: "Write a snapshot of the cached records to a file.",
            usage: SnapshotCommands.exportUsage),
        Command(
            name: "import", summary: "Merge a snapshot (a file, or a server's URL) into the cache of --data-dir.",
            usage: SnapshotCommands.importUsage),
        Command(
            name: "reindex", summary: "Rebuild the local search index of the cache of --data-dir.",
            usage: ReindexCommand.usage),
        Command(
            name: "config", summary: "Print the configuration in effect, and where each value came from.",
            usage: ConfigCommand.usage),
        Command(name: "man", summary: "Print the manual page (make install writes it).", usage: ManualPage.usage),
        Command(
            name: "completion", summary: "Print the bash completion (make install writes it).",
            usage: CompletionScript.usage),
        Command(name: "help", summary: "Print the help of a command: themet help search.", usage: helpUsage),
    ]

    static let helpUsage = """
        usage: themet help [COMMAND]

        Prints what COMMAND takes (themet help search), or, without one, the commands and the
        server's options.
        """

    /// What `themet --help` prints: the commands, then the server's options (`serve` is the default).
    static var overview: String {
        var lines = ["usage: themet [COMMAND] [--flag VALUE]... [--] [ARGUMENTS]", "", "commands:"]
        for command in all {
            lines.append("  " + command.name.padding(toLength: 10, withPad: " ", startingAt: 0) + command.summary)
        }
        lines += [
            "", "themet help COMMAND (or themet COMMAND --help) prints a command's flags.",
            "Exit status: 0 done, 1 the request or the work failed, 64 bad arguments, 69 cannot listen.", "",
        ]
        return lines.joined(separator: "\n") + "\n" + ServerConfiguration.usage
    }

    /// The usage of `name`, or nil for no such command.
    static func usage(of name: String) -> String? {
        all.first { $0.name == name }?.usage
    }
}
