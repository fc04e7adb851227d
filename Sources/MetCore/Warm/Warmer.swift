import MetEngine

/// What `themet warm` fills the cache for.
public enum WarmSource: Sendable {
    /// Every hit of a search (on v1.1, its first 10,000: what any page of it can show).
    case search(SearchQuery)
    /// Every object of a department.
    case department(Int)
    /// These object IDs.
    case ids([Int])
}

/// Which pictures of each object `themet warm --images` fetches into the pictures' tiers.
public enum WarmPictures: String, Sendable, CaseIterable {
    /// `primaryImageSmall` (else `primaryImage`): what thumbnails and the widget show.
    case small
    /// `primaryImage` and every `additionalImages`: what the detail view and IIIF derive from.
    case original
}

/// How far a warm-up got.
public struct WarmProgress: Sendable, Equatable {
    /// The pictures of the objects dealt with so far (`--images`).
    public struct Pictures: Sendable, Equatable {
        /// Fetched from the image host and stored.
        public var fetched = 0
        /// Already fresh in a tier: not asked.
        public var fresh = 0
        /// The image host failed or sent something that is not a picture (not stored).
        public var failed = 0

        public var done: Int { fetched + fresh + failed }

        public init(fetched: Int = 0, fresh: Int = 0, failed: Int = 0) {
            self.fetched = fetched
            self.fresh = fresh
            self.failed = failed
        }
    }

    /// Objects to warm.
    public var total = 0
    /// Asked of the Met and stored (a Met 404 included: it is cached too).
    public var fetched = 0
    /// Already fresh in a tier: not asked.
    public var fresh = 0
    /// The Met failed for them (they are asked again by the next warm-up or request).
    public var failed = 0
    /// While the Met's firewall (or the image host's) blocks the server: when the block ends
    /// (seconds since 1970), after which the warm-up goes on with what it was on. Nil otherwise.
    public var blockedUntil: Double?
    public var pictures = Pictures()

    /// Objects dealt with so far.
    public var done: Int { fetched + fresh + failed }

    public init(total: Int = 0) { self.total = total }
}

/// Fills the cache ahead of requests: the IDs of a source, then each object through the pacer
/// unless a tier holds it fresh, and with `pictures` its pictures through the image host's pacer
/// into the pictures' tiers. One object (or picture) at a time (the pacers set the pace anyway),
/// so a stop between two leaves nothing half done; every fetched entry is in memory and queued for
/// the disk. A firewall block is waited out (what it refused is asked again once it ends): a
/// warm-up is the long, patient job the block asks for, and knocking during it only extends it.
public struct Warmer: Sendable {
    let fetcher: CachedFetcher<MetResource>
    let images: ImageEngine
    let searchAPI: SearchAPIMode
    /// The pictures of each object it warms too; nil: none.
    public let pictures: WarmPictures?
    /// The breaker: when a block ends.
    let monitor: UpstreamMonitor
    let time: any TimeSource

    /// A warmer over `engine`'s tiers and clients; a search is listed with `searchAPI`; `pictures`
    /// names the pictures of each object to warm too (nil: none).
    public init(engine: CacheEngine, searchAPI: SearchAPIMode, pictures: WarmPictures? = nil) {
        fetcher = engine.fetcher
        images = engine.images
        self.searchAPI = searchAPI
        self.pictures = pictures
        monitor = engine.monitor
        time = engine.time
    }

    /// How often a stop is looked for while a block is waited out, in seconds.
    static let stopCheckInterval = 1.0

    /// The object IDs `source` names, in its order, without repeats; through the cache (a list
    /// fetched here is stored like any other).
    public func ids(of source: WarmSource) async -> Result<[Int], UpstreamError> {
        switch source {
        case .ids(let ids):
            return .success(Self.unique(ids))
        case .department(let id):
            return await list(.objectList(departmentIds: [id], metadataDate: nil)).map { Self.unique($0.ids) }
        case .search(let query):
            let v1 = MetResource.search(.v1, filters: query.filters, q: query.q)
            if searchAPI == .v1 { return await list(v1).map { Self.unique($0.ids) } }
            var whole = query
            whole.sort = .id  // a whole-list order: the window then names every page
            let window = SearchWindow(query: whole, api: .v1_1)
            var ids: [Int] = []
            for (index, resource) in window.firstResources().enumerated() {
                switch await list(resource) {
                case .failure(.status(404)) where searchAPI == .auto && index == 0:
                    // No v1.1 at this Met: the older generation.
                    return await list(v1).map { Self.unique($0.ids) }
                case .failure(let error):
                    return .failure(error)
                case .success(let first):
                    ids += first.ids
                    for page in window.remainingResources(total: first.total) {
                        switch await list(page) {
                        case .success(let more): ids += more.ids
                        case .failure(let error): return .failure(error)
                        }
                    }
                }
            }
            return .success(Self.unique(ids))
        }
    }

    /// Warms `ids` in order until `stop` says so (asked before each, and every
    /// `stopCheckInterval` while a block is waited out), telling `report` after each, and every
    /// `stopCheckInterval` while a block is waited out (`blockedUntil` set).
    public func warm(_ ids: [Int], stop: () -> Bool, report: (WarmProgress) -> Void) async -> WarmProgress {
        var progress = WarmProgress(total: ids.count)
        var index = ids.startIndex
        while index < ids.endIndex, !stop() {
            var stored = true
            switch await fetcher.warm(.object(id: ids[index])) {
            case .fresh: progress.fresh += 1
            case .fetched: progress.fetched += 1
            case .failed(.blocked):
                guard await waitOutBlock(monitor, &progress, stop: stop, report: report) else { return progress }
                continue  // the same object again
            case .failed:
                progress.failed += 1
                stored = false
            }
            if stored, pictures != nil {
                guard await warmPictures(of: ids[index], &progress, stop: stop, report: report) else { return progress }
            }
            index += 1
            report(progress)
        }
        return progress
    }

    /// Warms the pictures of object `id` (in memory: just warmed), one at a time; false when `stop`
    /// said so while a block of the image host was waited out.
    private func warmPictures(
        of id: Int, _ progress: inout WarmProgress, stop: () -> Bool, report: (WarmProgress) -> Void
    ) async -> Bool {
        var paths = picturePaths(of: id)[...]
        while let path = paths.first {
            switch await images.fetcher.warm(images.resource(path.path)) {
            case .fresh: progress.pictures.fresh += 1
            case .fetched: progress.pictures.fetched += 1
            case .failed(.blocked):
                guard await waitOutBlock(images.monitor, &progress, stop: stop, report: report) else { return false }
                continue  // the same picture again
            case .failed: progress.pictures.failed += 1
            }
            paths = paths.dropFirst()
        }
        return true
    }

    /// The image host's paths of the pictures `pictures` names in object `id`'s stored record,
    /// each once; none when the record is not a 200 (a Met 404) or names no picture of the host.
    private func picturePaths(of id: Int) -> [ImagePath] {
        guard let pictures, let entry = fetcher.held(.object(id: id)), entry.status == 200 else { return [] }
        let record = IIIFRecord.read(entry.body)
        let urls: [String]
        switch pictures {
        case .small:
            urls =
                [record.primaryImageSmall, record.primaryImage].compactMap { $0 }.first { !$0.isEmpty }
                .map { [$0] } ?? []
        case .original:
            urls = IIIFManifest(record: record, id: id, base: "").images
        }
        var seen = Set<String>()
        return urls.compactMap(ImagePath.onImageHost).filter { seen.insert($0.path).inserted }
    }

    /// Waits until the block `monitor` (the Met's breaker, or the image host's) shows ends,
    /// reporting it; false when `stop` said so meanwhile.
    /// A block this instance's breaker does not show (another instance's fetch reported it first)
    /// is given one `stopCheckInterval` before the object is asked again.
    private func waitOutBlock(
        _ monitor: UpstreamMonitor, _ progress: inout WarmProgress, stop: () -> Bool, report: (WarmProgress) -> Void
    ) async -> Bool {
        defer { progress.blockedUntil = nil }
        let now = time.now()
        var until = monitor.blockedUntil(at: now) ?? now + Self.stopCheckInterval
        while until > time.now() {
            progress.blockedUntil = until
            report(progress)
            if stop() { return false }
            do {
                try await time.sleep(until: min(until, time.now() + Self.stopCheckInterval))
            } catch {
                return false
            }
            until = monitor.blockedUntil(at: time.now()) ?? until
        }
        return !stop()
    }

    /// The ID list `resource` answers.
    private func list(_ resource: MetResource) async -> Result<IDList, UpstreamError> {
        switch await fetcher.resolve(resource, cached: nil, claim: .server, onPlaced: nil) {
        case .entry(let entry, _):
            guard case .ids(let list) = entry.details else { return .failure(.malformed("no ID list")) }
            return .success(list)
        case .failed(let error):
            return .failure(error)
        case .pending, .cancelled:
            return .failure(.cancelled)
        }
    }

    private static func unique(_ ids: [Int]) -> [Int] {
        var seen = Set<Int>()
        return ids.filter { seen.insert($0).inserted }
    }
}
