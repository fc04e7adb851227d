import EventLoops
import Foundation
import MetCore
import MetEngine

/// `themet warm`: fills the data directory's cache for a search, a department or a file of IDs,
/// through the pacer, with a progress bar on a terminal.
enum WarmCommand {
    static let usage = """
        usage: themet warm (--q QUERY [search filters] | --department N | --ids FILE)
                           [--images small|original] [server flags]

        Fills the cache of --data-dir (memory, then cache.sqlite) with every object of a search
        (--q and the /search filters, such as --hasImages true --medium Paintings; on v1.1 its
        first 10,000 hits), of a department (--department 11), or of a file of object IDs
        (--ids FILE, or - for standard input: IDs separated by spaces, commas or lines; # starts
        a comment). One object at a time through the pacer (--upstream-rate), skipping what is
        fresh. With --images, each object's pictures too, into the picture files, through the
        image host's own pacer (--image-rate): small, its primaryImageSmall (what thumbnails and
        the widget show); original, its primaryImage and additionalImages (what the detail view
        and IIIF derive from). On a terminal a progress bar shows done/total, rate, time left and
        failures; otherwise a line every 5 s. Ctrl-C (SIGINT) stops after the object or picture
        being fetched, keeping everything fetched so far. A summary ends it. Exit status: 0, 1
        when an object, a picture or the ID list failed, 130 when stopped, 64 for bad arguments.

        It works on the data directory itself (SQLite lets a running server share it); the
        server's own memory sees the new entries when it next reads them from the disk.
        """

    /// The flags that name what to warm, besides the search filters.
    private static let own: Set<String> = ["department", "ids", "images"]

    /// What to warm, which pictures with it, and the server flags. Throws a `ConfigurationError`
    /// for bad arguments.
    static func parse(_ arguments: [String]) throws(ConfigurationError) -> (
        source: Source, pictures: WarmPictures?, server: [String]
    ) {
        let known = own.union(SearchQuery.parameters)
        let (items, server, positional) = try RouteArguments.split(arguments, known: known)
        if let extra = positional.first { throw ConfigurationError(flag: extra, reason: "unexpected argument") }
        let department = items.last { $0.name == "department" }?.value
        let file = items.last { $0.name == "ids" }?.value
        var pictures: WarmPictures?
        if let images = items.last(where: { $0.name == "images" })?.value {
            guard let named = WarmPictures(rawValue: images) else {
                throw ConfigurationError(flag: "--images", reason: "expected small or original, got '\(images)'")
            }
            pictures = named
        }
        let search = items.filter { !own.contains($0.name) }
        let named = [department != nil, file != nil, !search.isEmpty].filter { $0 }.count
        guard named == 1 else {
            throw ConfigurationError(flag: "--q", reason: "give one of --q QUERY, --department N or --ids FILE")
        }
        if let department {
            guard let id = Int(department), id > 0 else {
                throw ConfigurationError(flag: "--department", reason: "expected a department ID, got '\(department)'")
            }
            return (.department(id), pictures, server)
        }
        if let file { return (.file(file), pictures, server) }
        guard search.contains(where: { $0.name == "q" }) else {
            throw ConfigurationError(flag: "--q", reason: "the search filters need --q QUERY")
        }
        let target = PercentEncoding.target(path: "/search", query: search, keeping: [.comma, .pipe])
        do {
            return (.search(try SearchQuery(RequestTarget(parsing: target))), pictures, server)
        } catch {
            throw ConfigurationError(flag: "--\(error.parameter ?? "q")", reason: error.detail)
        }
    }

    /// What the arguments name; a file is read once the configuration is known.
    enum Source: Sendable {
        case search(SearchQuery)
        case department(Int)
        case file(String)
    }

    /// The IDs in `text`: separated by spaces, commas or lines, `#` to the line's end a comment.
    /// Throws naming the first token that is not an object ID.
    static func ids(in text: String) throws(ConfigurationError) -> [Int] {
        var ids: [Int] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = line.prefix { $0 != "#" }
            for token in content.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\r" }) {
                guard let id = Int(token), (1...Int(Int32.max)).contains(id) else {
                    throw ConfigurationError(
                        flag: "--ids", reason: "line \(number + 1): '\(token.prefix(40))' is not an object ID")
                }
                ids.append(id)
            }
        }
        return ids
    }

    /// Runs the warm-up of `source` with `warmer`; the exit status.
    static func run(_ source: Source, warmer: Warmer) async -> Int32 {
        let stopped: StopFlag
        do {
            stopped = try StopFlag()
        } catch {
            complain("cannot watch SIGINT: \(error)")
            return 1
        }
        let resolved: WarmSource
        switch source {
        case .search(let query): resolved = .search(query)
        case .department(let id): resolved = .department(id)
        case .file(let path):
            let data =
                path == "-"
                ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: path)
            guard let data, let text = String(data: data, encoding: .utf8) else {
                complain("cannot read --ids \(path)")
                return 64
            }
            do {
                resolved = .ids(try ids(in: text))
            } catch {
                complain("\(error)")
                return 64
            }
        }
        let display = ProgressDisplay(terminal: isatty(2) == 1)
        display.note("listing the objects to warm…")
        let ids: [Int]
        switch await warmer.ids(of: resolved) {
        case .success(let listed): ids = listed
        case .failure(let error):
            display.finish()
            complain("cannot list the objects to warm: \(error.logDescription)")
            return 1
        }
        let started = Date()
        let progress = await warmer.warm(
            ids, stop: { stopped.isSet }, report: { display.show($0, since: started) })
        display.show(progress, since: started, force: true)
        display.finish()
        let elapsed = ProgressDisplay.duration(Date().timeIntervalSince(started))
        var summary =
            "warmed \(progress.done) of \(progress.total) object(s) in \(elapsed): \(progress.fetched) fetched, "
            + "\(progress.fresh) already fresh, \(progress.failed) failed"
        if warmer.pictures != nil {
            let pictures = progress.pictures
            summary +=
                "; \(pictures.done) picture(s): \(pictures.fetched) fetched, \(pictures.fresh) already fresh, "
                + "\(pictures.failed) failed"
        }
        if stopped.isSet { summary += "; stopped by SIGINT, \(progress.total - progress.done) not asked" }
        print(summary)
        if stopped.isSet { return 130 }
        return progress.failed == 0 && progress.pictures.failed == 0 ? 0 : 1
    }

    private static func complain(_ message: String) {
        FileHandle.standardError.write(Data("themet: warm: \(message)\n".utf8))
    }
}

/// Set by SIGINT (Ctrl-C), read by the warm-up before each object. A second SIGINT exits at once.
final class StopFlag: Sendable {
    private let flag = Locked(false)

    /// Catches SIGINT from here on (see `SignalWatch`).
    init() throws(EventLoopError) {
        try SignalWatch.observe(SIGINT) { [flag] in
            if flag.withLock({ set in
                defer { set = true }
                return set
            }) {
                exit(130)
            }
            FileHandle.standardError.write(Data("\nthemet: warm: stopping after the object being fetched…\n".utf8))
        }
    }

    var isSet: Bool { flag.withLock { $0 } }
}

/// The warm-up's progress on standard error: a bar redrawn in place on a terminal (at most ten
/// times a second), or a plain line every 5 s otherwise; a block the warm-up waits out is said at
/// once, when it begins and when it ends. Any thread.
final class ProgressDisplay: Sendable {
    private let terminal: Bool
    /// When the line was last drawn, and the block it showed (nil: none).
    private let last = Locked((time: Date.distantPast, blockedUntil: Double?.none))

    init(terminal: Bool) { self.terminal = terminal }

    func note(_ text: String) {
        FileHandle.standardError.write(Data((terminal ? "\r\u{1B}[K" + text : text + "\n").utf8))
    }

    func show(_ progress: WarmProgress, since started: Date, force: Bool = false) {
        let now = Date()
        let due = last.withLock { last -> Bool in
            let changed = last.blockedUntil != progress.blockedUntil
            guard force || changed || now.timeIntervalSince(last.time) >= (terminal ? 0.1 : 5) else { return false }
            last = (now, progress.blockedUntil)
            return true
        }
        guard due else { return }
        let elapsed = max(now.timeIntervalSince(started), 0.001)
        let rate = Double(progress.done) / elapsed
        let left = rate > 0 ? Self.duration(Double(progress.total - progress.done) / rate) : "?"
        var figures =
            "\(progress.done)/\(progress.total)  \(String(format: "%.1f", rate))/s  ETA \(left)  "
            + "\(progress.failed) failed"
        if progress.pictures.done > 0 {
            figures += "  \(progress.pictures.done) picture(s), \(progress.pictures.failed) failed"
        }
        if let until = progress.blockedUntil {
            let seconds = Self.duration(max(0, until - now.timeIntervalSince1970))
            figures += "  waiting out a firewall block until \(Timestamp.rfc3339(until)) (\(seconds))"
        }
        if terminal {
            let width = 30
            let filled = progress.total == 0 ? width : width * progress.done / progress.total
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            FileHandle.standardError.write(Data("\r\u{1B}[K\(bar) \(figures)".utf8))
        } else {
            FileHandle.standardError.write(Data("warm: \(figures)\n".utf8))
        }
    }

    /// Ends the bar's line on a terminal.
    func finish() {
        if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    /// `1h02m`, `3m05s` or `42s`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole >= 3_600 { return "\(whole / 3_600)h\(String(format: "%02d", whole / 60 % 60))m" }
        if whole >= 60 { return "\(whole / 60)m\(String(format: "%02d", whole % 60))s" }
        return "\(whole)s"
    }
}
