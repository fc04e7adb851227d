import MetEngine

/// `/iiif/{objectID}/{n}/…`: the IIIF Image API 3.0, level 2, over an object's pictures
/// (`IIIFImageRequest`). Picture `n` is the manifest's canvas `n` (`IIIFManifest.images`: the
/// primary image, then the additional ones); its original comes through the pictures' tiers
/// (`ImageEngine`), so the image host is asked once per picture whatever is derived from it.
///
/// - `…/info.json`: the picture's size, bounds, sizes and tiles (`IIIFImageInfo`).
/// - `…/{region}/{size}/{rotation}/{quality}.{format}`: a derivative, made once per canonical
///   request and original (its key holds both), under single flight, by `deriver` on a thread of
///   its own through `gate` (which bounds the decodes, and so their memory), then kept in the
///   pictures' memory and files like the originals and served as they are (`ImageHandler.present`:
///   ETag, 304, ranges).
/// - `…/{objectID}/{n}`: 303 to its `info.json`.
///
/// When the record, the original and the derivative are all fresh in memory, the answer is made
/// on the loop thread; otherwise in a task. Any thread.
final class IIIFImageHandler: Sendable {
    private let engine: CacheEngine
    private let deriver: any ImageDeriver
    private let gate: BlockingGate
    private let flights = SingleFlight<Derived>()
    /// What each record gives the Image API, by the record's ETag (which names one object's
    /// record), so that a hit neither decodes the record's JSON again nor parses its picture URLs.
    /// Emptied when it passes `pictureListBound` records.
    private let pictureLists = Locked([String: Pictures]())
    private static let pictureListBound = 4_096
    private let presenter: Presenter
    private let publicURL: String?
    private let time: any TimeSource
    private let clientLimit: Int

    /// A record's refusal (`ManifestPipeline.refusal`), or its pictures (`IIIFManifest.images`), each
    /// the image host's path, or nil when it is on another host.
    private enum Pictures {
        case refused(Response)
        case listed([ImagePath?])
    }

    /// A step's value, or the answer that ends the request instead.
    private enum Step<Value> {
        case value(Value)
        case answer(Response)
    }

    /// What one derivation came to.
    private enum Derived: Sendable {
        case made(CacheEntry, CacheOutcome)
        case failed(String)
    }

    /// - Parameter derivations: how many derivations may run at once (`--image-derivations`).
    init(
        engine: CacheEngine, deriver: any ImageDeriver, derivations: Int, presenter: Presenter, publicURL: String?,
        time: any TimeSource, clientLimit: Int
    ) {
        self.engine = engine
        self.deriver = deriver
        gate = BlockingGate(limit: derivations)
        self.presenter = presenter
        self.publicURL = publicURL
        self.time = time
        self.clientLimit = clientLimit
    }

    /// The answer to `iiif`, on the loop thread.
    func answer(_ iiif: IIIFImageRequest, for request: RouteRequest) -> Answer {
        let base =
            ManifestPipeline.base(
                publicURL: publicURL, scheme: request.forwarded?.forwardedProto ?? "http",
                host: request.request.headers["Host"]) + "/iiif/\(iiif.objectID)/\(iiif.index)"
        if case .base = iiif.operation {
            var headers = HTTPFields()
            headers.append("Location", base + "/info.json")
            return .ready(Response(status: 303, headers: headers))
        }
        let record = MetResource.object(id: iiif.objectID)
        // On the loop when memory holds every part fresh.
        let heldRecord = engine.fetcher.fromMemory(record, claim: request.claim)?.entry
        if let recordEntry = heldRecord {
            switch picture(iiif, of: recordEntry) {
            case .answer(let refusal): return .ready(refusal)
            case .value(let path):
                if let (original, _) = engine.images.fetcher.fromMemory(
                    engine.images.resource(path.path), claim: request.claim),
                    let response = quickAnswer(iiif, original: original, base: base, to: request.request)
                {
                    return .ready(response)
                }
            }
        }
        let claim = request.claim
        let http = request.request
        return .suspended(
            Suspension { [self] in
                let now = time.now()
                // The record memory held (already counted as a hit), else through the tiers.
                let recordEntry: CacheEntry
                if let heldRecord {
                    recordEntry = heldRecord
                } else {
                    switch await engine.fetcher.lookUp(record, claim: claim) {
                    case .entry(let entry, _): recordEntry = entry
                    case let failure: return presenter.failure(failure, of: record)
                    }
                }
                let path: ImagePath
                switch picture(iiif, of: recordEntry) {
                case .answer(let refusal): return refusal
                case .value(let found): path = found
                }
                let resource = engine.images.resource(path.path)
                let original: CacheEntry
                switch await engine.images.fetcher.lookUp(resource, claim: claim) {
                case .entry(let entry, _): original = entry
                case .failed(let error):
                    return ImageHandler.problem(
                        for: error, fetching: resource.path, engine: engine.images, clientLimit: clientLimit, at: now)
                case .cancelled, .pending: return Response(status: 499)
                }
                guard original.status == 200, case .image(let details) = original.details else {
                    return Problem(.imageNotFound, "The Met's image host has no picture at \(path.path).").response
                }
                let bounds = IIIFImageBounds(width: details.width, height: details.height)
                guard case .image(let parameters) = iiif.operation else {
                    return IIIFImageInfo(id: base, bounds: bounds).response(for: original, to: http, at: time.now())
                }
                let derivation: ImageDerivation
                let canonical: String
                do throws(IIIFImageRequest.Failure) {
                    (derivation, canonical) = try parameters.plan(within: bounds)
                } catch { return Self.problem(error) }
                let key = Self.key(original: original, canonical: canonical)
                switch await derive(key, derivation, from: original, details: details, claim: claim) {
                case .value(let (entry, outcome)):
                    return present(
                        entry, outcome: outcome, link: Self.link(canonical: base + "/" + canonical), to: http,
                        at: time.now())
                case .answer(let response):
                    return response
                }
            })
    }

    /// The answer when the original is at hand and the request needs nothing else: `info.json`, a
    /// derivative memory holds fresh, or a request the picture cannot satisfy. Nil: derive.
    private func quickAnswer(
        _ iiif: IIIFImageRequest, original: CacheEntry, base: String, to request: Request
    ) -> Response? {
        guard original.status == 200, case .image(let details) = original.details else { return nil }
        let bounds = IIIFImageBounds(width: details.width, height: details.height)
        guard case .image(let parameters) = iiif.operation else {
            return IIIFImageInfo(id: base, bounds: bounds).response(for: original, to: request, at: time.now())
        }
        let canonical: String
        do throws(IIIFImageRequest.Failure) {
            (_, canonical) = try parameters.plan(within: bounds)
        } catch { return Self.problem(error) }
        let key = Self.key(original: original, canonical: canonical)
        let now = time.now()
        guard let held = engine.images.cache.entry(for: key), held.isFresh(at: now) else { return nil }
        engine.images.cache.count(.hit)
        let link = { Self.link(canonical: base + "/" + canonical) }
        guard ImageHandler.isPlain(request) else {
            return present(held, outcome: .hit, link: link(), to: request, at: now)
        }
        // A plain hit: made once a second for this base URI (which the link holds, with the
        // request's host), then shared, as a picture's is.
        let second = Int(now.rounded(.down))
        return presenter.hitResponses.response(
            for: held.serial, second: second, age: second - held.fetchedSecond,
            ttl: Int((held.freshUntil - now).rounded(.down)),
            gzip: false, variant: base
        ) { present(held, outcome: .hit, link: link(), to: request, at: now) }
    }

    /// Picture `iiif.index` of the record in `entry`, as an image host path; else the problem.
    private func picture(_ iiif: IIIFImageRequest, of entry: CacheEntry) -> Step<ImagePath> {
        let listing: Pictures
        if let known = pictureLists.withLock({ $0[entry.etag] }) {
            listing = known
        } else {
            if let refusal = ManifestPipeline.refusal(of: entry, id: iiif.objectID) {
                listing = .refused(refusal)
            } else {
                listing = .listed(
                    IIIFManifest(record: IIIFRecord.read(entry.body), id: iiif.objectID, base: "").images
                        .map(ImagePath.onImageHost))
            }
            pictureLists.withLock { lists in
                if lists.count >= Self.pictureListBound { lists.removeAll(keepingCapacity: true) }
                lists[entry.etag] = listing
            }
        }
        let pictures: [ImagePath?]
        switch listing {
        case .refused(let refusal): return .answer(refusal)
        case .listed(let listed): pictures = listed
        }
        guard iiif.index < pictures.count else {
            return .answer(
                Problem(
                    .imageNotFound,
                    "Object \(iiif.objectID) has \(pictures.count) picture\(pictures.count == 1 ? "" : "s"), numbered "
                        + "from 0; there is no picture \(iiif.index)."
                ).response)
        }
        guard let path = pictures[iiif.index] else {
            return .answer(
                Problem(
                    .imageNotFound,
                    "Picture \(iiif.index) of object \(iiif.objectID) is not on the Met's image host, so this server "
                        + "cannot fetch it."
                ).response)
        }
        return .value(path)
    }

    /// The derivative under `key`: from memory, else from the picture files, else made (once, for
    /// every request that asks meanwhile) and kept in both. The whole picture at a size is made from
    /// the original (a JPEG decodes at a fraction of its size); a part of it (a tile, a detail)
    /// from the picture's pyramid, made once, so that a tile decodes a few of the pyramid's tiles
    /// rather than the whole original.
    private func derive(
        _ key: String, _ derivation: ImageDerivation, from original: CacheEntry, details: ImageDetails,
        claim: UpstreamClaim
    ) async -> Step<(CacheEntry, CacheOutcome)> {
        let turned = derivation.quarters % 2 == 1
        let made = ImageDetails(
            contentType: derivation.encoding.contentType,
            width: turned ? derivation.height : derivation.width,
            height: turned ? derivation.width : derivation.height,
            upstream: UpstreamValidators(etag: nil, lastModified: details.upstream.lastModified))
        let whole =
            derivation.x == 0 && derivation.y == 0 && derivation.regionWidth == details.width
            && derivation.regionHeight == details.height
        let result = await kept(key, details: made, claim: claim) { [self] in
            guard !whole else {
                return await gate.run { [deriver] in
                    Self.made {
                        try deriver.derive(
                            derivation, from: original.body, width: details.width, height: details.height)
                    }
                }
            }
            switch await pyramid(of: original, details: details, claim: claim) {
            case .success(let (pyramid, _)):
                return await gate.run { [deriver] in
                    Self.made {
                        try deriver.derive(
                            derivation, fromPyramid: pyramid.body, width: details.width, height: details.height)
                    }
                }
            case .failure(let unmade):
                return .failure(unmade)
            }
        }
        switch result {
        case .success(let made):
            return .value(made)
        case .failure(.failed(let message)):
            return .answer(
                Problem(.imageNotDerivable, "The picture could not be derived as asked: \(message)").response)
        case .failure(.cancelled):
            return .answer(Response(status: 499))
        }
    }

    /// The pyramid of `original` (`ImageDeriver.pyramid`), kept as derivatives are, under a key of
    /// its own for the original's ETag.
    private func pyramid(
        of original: CacheEntry, details: ImageDetails, claim: UpstreamClaim
    ) async -> Result<(CacheEntry, CacheOutcome), Unmade> {
        let kept = ImageDetails(
            contentType: "image/tiff", width: details.width, height: details.height,
            upstream: UpstreamValidators(etag: nil, lastModified: details.upstream.lastModified))
        return await self.kept("iiif-pyramid \(original.key) \(original.etag)", details: kept, claim: claim) {
            [self] in
            await gate.run { [deriver] in
                Self.made { try deriver.pyramid(of: original.body, width: details.width, height: details.height) }
            }
        }
    }

    /// Why `kept` has no entry.
    private enum Unmade: Error {
        /// The deriver failed; the message says why.
        case failed(String)
        /// The caller's task was cancelled while it waited.
        case cancelled
    }

    /// What the deriver's `work` made, or its error as a failure's message (`kept` counts it).
    private static func made(_ work: () throws -> [UInt8]) -> Result<[UInt8], Unmade> {
        do {
            return .success(try work())
        } catch {
            return .failure(.failed("\(error)"))
        }
    }

    /// The picture under `key`: from memory, else from the picture files, else made by `make`
    /// (once, for every caller meanwhile: single flight) and kept in both, its time observed.
    private func kept(
        _ key: String, details: ImageDetails, claim: UpstreamClaim,
        make: @escaping @Sendable () async -> Result<[UInt8], Unmade>
    ) async -> Result<(CacheEntry, CacheOutcome), Unmade> {
        let images = engine.images
        if let held = images.cache.entry(for: key), held.isFresh(at: time.now()) {
            images.cache.count(.hit)
            return .success((held, .hit))
        }
        let (result, joined) = await flights.run(key, claim: claim) { [self] _ in
            if let stored = images.files?.entry(for: key), stored.isFresh(at: time.now()) {
                images.cache.store(stored)
                return .success(.made(stored, .diskHit))
            }
            let started = time.now()
            switch await make() {
            case .success(let bytes):
                let entry = CacheEntry(
                    key: key, kind: .image, status: 200, body: bytes, storedAt: time.now(),
                    policy: images.freshness, details: .image(details))
                images.cache.store(entry)
                images.files?.store(entry)
                images.derivationTime.observe(time.now() - started)
                return .success(.made(entry, .miss))
            case .failure(.failed(let message)):
                images.derivationFailures.add()
                return .success(.failed(message))
            case .failure(.cancelled):
                return .success(.failed("it was cancelled"))
            }
        }
        switch result {
        case .success(.made(let entry, let outcome)):
            let counted: CacheOutcome = joined ? .collapsed : outcome
            images.cache.count(counted)
            return .success((entry, counted))
        case .success(.failed(let message)):
            return .failure(.failed(message))
        case .failure:
            return .failure(.cancelled)
        }
    }

    /// A derivative's key: the original's key and ETag (a changed original is a new key) and the
    /// canonical parameters.
    private static func key(original: CacheEntry, canonical: String) -> String {
        "iiif \(original.key) \(original.etag) \(canonical)"
    }

    /// `ImageHandler.present`, with `link` (`link(canonical:)`).
    private func present(
        _ entry: CacheEntry, outcome: CacheOutcome, link: String, to request: Request, at now: Double
    ) -> Response {
        var response = ImageHandler.present(entry, outcome: outcome, to: request, at: now, engine: engine.images)
        response.headers.append("Link", link)
        return response
    }

    /// The `Link` field of a derivative: the request's canonical URI and the service's level.
    private static func link(canonical: String) -> String {
        "<\(canonical)>;rel=\"canonical\", <http://iiif.io/api/image/3/level2.json>;rel=\"profile\""
    }

    /// The problem document of a request the API's rules refuse (400), this server does not do
    /// (501), that names no picture or that no route has (404).
    static func problem(_ failure: IIIFImageRequest.Failure) -> Response {
        switch failure {
        case .invalid(let detail): Problem(.invalidIIIFRequest, detail).response
        case .unsupported(let detail): Problem(.iiifFeatureNotSupported, detail).response
        case .noSuchImage(let detail): Problem(.imageNotFound, detail).response
        case .notARoute: RouteTable.noRoute("/iiif/…").response
        }
    }
}
