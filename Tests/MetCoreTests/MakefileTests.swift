import Foundation
import Testing

@Suite("The Makefile")
struct MakefileTests {
    static let makefile =
        (try? String(contentsOf: Repository.root.appendingPathComponent("Makefile"), encoding: .utf8)) ?? ""

    /// The targets `.PHONY` declares (continuation lines included).
    static var phonyTargets: [String] {
        let joined = makefile.replacingOccurrences(of: "\\\n", with: " ")
        guard let line = joined.split(separator: "\n").first(where: { $0.hasPrefix(".PHONY:") }) else { return [] }
        return line.dropFirst(".PHONY:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
    }

    @Test func makeHelpListsEveryTarget() {
        #expect(Self.phonyTargets.count >= 15)
        guard let start = Self.makefile.range(of: "\nhelp:\n") else {
            Issue.record("no help target")
            return
        }
        let help = Self.makefile[start.upperBound...].split(separator: "\n").prefix { $0.hasPrefix("\t") }
        for target in Self.phonyTargets {
            #expect(help.contains { $0.contains("\"make \(target) ") }, "make help does not list \(target)")
        }
    }
}
