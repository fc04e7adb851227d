import Foundation
import MetCore
import TestKit
import Testing

/// What `make install` puts (its `Packaging/install`, run on the built themet into a scratch
/// DESTDIR): exactly the documented files; a unit `systemd-analyze verify` passes without a word;
/// a manual page that `man -l` renders and groff reads without a warning; a completion that
/// offers every flag; an example configuration the server reads.
@Suite("Installed like a service")
struct InstallTests {
    /// The files under PREFIX, as Packaging/install and the README list them.
    static let documented = [
        "bin/themet", "lib/systemd/system/themet.service", "lib/sysusers.d/themet.conf",
        "share/bash-completion/completions/themet",
        "share/doc/themet/themet.conf.example", "share/man/man1/themet.1",
    ]

    /// Runs `command` with `arguments`; its status and standard output and error.
    private static func run(_ command: String, _ arguments: [String]) async throws -> ThemetCommand.Outcome {
        try await ThemetCommand.run(arguments, executable: URL(fileURLWithPath: command))
    }

    @Test func theInstalledFilesAreTheDocumentedOnesAndEachChecksOut() async throws {
        let scratch = TemporaryDirectory()
        let installed = try await Self.run(
            BuiltProducts.packageRoot.appendingPathComponent("Packaging/install").path,
            [BuiltProducts.directory.path, scratch.path, "/usr/local"])
        #expect(installed.status == 0, "\(installed.errorText)")
        let root = scratch.path + "/usr/local"
        let files = try FileManager.default.subpathsOfDirectory(atPath: root).filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }
        #expect(files.sorted() == Self.documented)

        // The unit, its ExecStart pointing into the scratch tree (verify checks it is executable).
        let unit = try String(contentsOfFile: root + "/lib/systemd/system/themet.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/themet serve\n"))
        let checked = scratch.path + "/verify"
        try FileManager.default.createDirectory(atPath: checked, withIntermediateDirectories: true)
        try unit.replacingOccurrences(of: "ExecStart=/usr/local/bin/", with: "ExecStart=\(root)/bin/")
            .write(toFile: checked + "/themet.service", atomically: false, encoding: .utf8)
        let analyzer = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        let verified = try await Self.run(
            try #require(analyzer, "no systemd-analyze: make test installs systemd"),
            ["verify", "--man=no", checked + "/themet.service"])
        #expect(verified.status == 0)
        #expect(verified.errorText.isEmpty && verified.output.isEmpty, "\(verified.errorText)")

        // The manual page: rendered by man, read by groff without a warning, every flag in it.
        let page = root + "/share/man/man1/themet.1"
        let rendered = try await Self.run("/usr/bin/man", ["-l", page])
        #expect(rendered.status == 0, "\(rendered.errorText)")
        let text = String(decoding: rendered.output, as: UTF8.self)
        #expect(text.contains("THEMET(1)"))
        let warnings = try await Self.run("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", page])
        #expect(warnings.status == 0 && warnings.errorText.isEmpty, "\(warnings.errorText)")
        for option in ServerConfiguration.options {
            #expect(text.contains(option.flag), "\(option.flag) not in the manual page")
        }

        // The completion offers every flag after --, and the commands first.
        let script = root + "/share/bash-completion/completions/themet"
        let offered = try await Self.run(
            "/bin/bash",
            [
                "-c",
                "source \"$0\"; COMP_WORDS=(themet --); COMP_CWORD=1; _themet; printf '%s\\n' \"${COMPREPLY[@]}\"; "
                    + "COMP_WORDS=(themet s); COMP_CWORD=1; _themet; printf '%s\\n' \"${COMPREPLY[@]}\"",
                script,
            ])
        #expect(offered.status == 0, "\(offered.errorText)")
        let words = Set(String(decoding: offered.output, as: UTF8.self).split(separator: "\n").map(String.init))
        for flag in ServerConfiguration.options.map(\.flag) + ["--config", "--help", "--version"] {
            #expect(words.contains(flag), "\(flag) not offered")
        }
        #expect(words.isSuperset(of: ["serve", "search", "sync"]))

        // The example configuration is one the server reads.
        let example = root + "/share/doc/themet/themet.conf.example"
        let configured = try await Self.run(root + "/bin/themet", ["config", "--config", example])
        #expect(configured.status == 0, "\(configured.errorText)")
        #expect(String(decoding: configured.output, as: UTF8.self).contains("port = 8080  # \(example):"))
    }
}
