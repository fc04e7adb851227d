import MetCore
import MetEngine

/// `themet man`: themet's manual page (man(7) macros), made from the tables `--help` prints
/// (`Commands.all`, `ServerConfiguration.options`), so that it cannot say other than the binary
/// does. `make install` writes it as `share/man/man1/themet.1`.
enum ManualPage {
    static let usage = """
        usage: themet man

        Prints themet's manual page (man(7) format) on standard output, made from the same
        tables as --help: make install writes it as share/man/man1/themet.1 (man themet).
        """

    /// The page.
    static var text: String {
        var page = [
            ".TH THEMET 1 \"\" \"themet \(MetService.version)\" \"User Commands\"",
            ".SH NAME",
            "themet \\- a caching gateway in front of the Metropolitan Museum of Art Collection API",
            ".SH SYNOPSIS",
            ".B themet",
            "[\\fICOMMAND\\fR] [\\fB\\-\\-flag\\fR \\fIVALUE\\fR]... [\\fB\\-\\-\\fR] [\\fIARGUMENTS\\fR]",
            ".SH DESCRIPTION",
            escaped(
                "themet serves the Met's Collection API from a cache in memory, on disk (SQLite) and, "
                    + "shared, in Redis: hydrated searches, objects, a widget's timeline, deep links, pictures "
                    + "through IIIF and a Met-compatible mirror, asking the Met politely (one request a second "
                    + "by default) and standing in for it when it cannot answer. Without a command it serves "
                    + "HTTP; it prints listening on http://HOST:PORT once bound."),
            ".SH COMMANDS",
        ]
        for command in Commands.all {
            page += [".TP", ".B " + command.name, escaped(command.summary)]
        }
        page += [
            ".SH OPTIONS",
            escaped(
                "Each option is a flag, a THEMET_* environment variable, or a line of the configuration file; "
                    + "flags win over variables, which win over the file, which wins over defaults. Durations "
                    + "are seconds or take a unit (250ms, 30s, 5m, 2h, 7d); sizes are bytes or take a binary "
                    + "suffix (64K, 256MiB, 1G)."),
            ".TP", ".BI \\-\\-config \" FILE\"",
            escaped(
                "The configuration file: name = value lines, the flags' names without their dashes. "
                    + "THEMET_CONFIG; default ~/.config/themet/themet.conf (or under $XDG_CONFIG_HOME), else "
                    + "/etc/themet/themet.conf, when present; an empty name reads none."),
        ]
        for option in ServerConfiguration.options {
            page += [
                ".TP", ".BI \(escaped(option.flag)) \" \(escaped(option.placeholder))\"", escaped(option.help), ".br",
                escaped("Environment: \(option.environmentVariable); default: \(option.defaultText)."),
            ]
        }
        page += [
            ".TP", ".B \\-\\-help", "Print the help, of a command after its name.", ".TP", ".B \\-\\-version",
            "Print the version.",
            ".SH CONFIGURATION FILE",
            escaped(
                "One setting a line, name = value (port = 8080); # starts a comment, at the start of a line "
                    + "or after a space; a value in quotes keeps its spaces and any #. A line that is not a "
                    + "setting, an unknown or repeated name, or a bad value stops themet with exit status 64 "
                    + "naming the file and the line. themet config prints the configuration in effect and where "
                    + "each value came from."),
            ".SH SIGNALS",
            escaped(
                "SIGINT and SIGTERM stop the server after in-flight requests (up to --shutdown-timeout). "
                    + "SIGHUP reopens the --access-log file, for logrotate. SIGUSR1 and SIGUSR2 are logged and "
                    + "ignored."),
            ".SH EXIT STATUS",
            escaped(
                "0 done; 1 the request or the work failed; 64 bad arguments or configuration; 69 cannot "
                    + "listen."),
            ".SH FILES",
            ".TP", ".I /etc/themet/themet.conf", "The configuration file, when no other is named.",
            ".TP", ".I ~/.cache/themet",
            escaped("The data directory by default (--data-dir): the persistent cache, pictures, objects.json."),
            ".SH SEE ALSO",
            escaped("The README of TheMet server, and its openapi.yaml (GET /openapi.yaml of a running server)."),
        ]
        return page.joined(separator: "\n") + "\n"
    }

    /// `text` as roff reads it literally: a backslash as `\e`, a hyphen as `\-` (a minus sign,
    /// which copies as `-`), any other character past ASCII as `\[uXXXX]` (roff reads bytes as
    /// Latin-1), and a line that would start with `.` or `'` (a request) guarded by `\&`.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "\n": out += " "
            case _ where scalar.value > 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            default: out.unicodeScalars.append(scalar)
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }
}
