// libFuzzer harness: the input as a configuration file (`--config`), then resolved with it. Reading
// never traps; what it keeps is a setting of the option table, a line at a time in order, its
// value without control characters but tabs, and written back quoted it reads as itself; every
// error is one line naming the file; resolving never traps either.
@testable import MetCore
@testable import MetEngine

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfigFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let file: ConfigurationFile
    do {
        file = try ConfigurationFile(path: "fuzz.conf", bytes: bytes)
    } catch {
        precondition(!error.description.contains("\n"), "an error on several lines")
        precondition(error.description.contains("fuzz.conf"), "an error that does not name the file")
        return 0
    }
    var previous = 0
    for setting in file.settings {
        precondition(ServerConfiguration.options.contains { $0.flag == setting.option }, "\(setting.option) kept")
        precondition(setting.line > previous, "settings out of order")
        previous = setting.line
        precondition(
            !setting.value.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\t" },
            "a control character kept")
    }
    // Written back, each value quoted with a quote it does not hold, the file reads as itself.
    // By Unicode scalars, as the file is read: a quote may share a Character with a mark.
    let written = file.settings.compactMap { setting -> String? in
        let quote: Unicode.Scalar = setting.value.unicodeScalars.contains("\"") ? "'" : "\""
        guard !setting.value.unicodeScalars.contains(quote) else { return nil }
        return "\(setting.option.dropFirst(2)) = \(quote)\(setting.value)\(quote)"
    }
    if written.count == file.settings.count {
        let again = try? ConfigurationFile(path: "fuzz.conf", bytes: Array(written.joined(separator: "\n").utf8))
        precondition(
            again?.settings.map { [$0.option, $0.value] } == file.settings.map { [$0.option, $0.value] },
            "written back, the file reads otherwise")
    }
    do {
        _ = try ServerConfiguration.resolve(arguments: [], environment: [:], processorCount: 2, file: file)
    } catch {
        precondition(!error.description.contains("\n"), "an error on several lines")
    }
    return 0
}
