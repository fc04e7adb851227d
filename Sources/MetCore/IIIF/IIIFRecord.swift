import Foundation
import MetEngine

/// The members of a Met object record a IIIF manifest is made from. Decoded leniently: every
/// member is optional, and one of an unexpected type is treated as absent (the Met's schema has
/// changed over the years, docs/MET-API.md §3.2), so a record never fails to make a manifest.
struct IIIFRecord: Decodable {
    var objectID: Int?
    var title: String?
    var objectName: String?
    var artistDisplayName: String?
    var artistDisplayBio: String?
    var objectDate: String?
    var culture: String?
    var period: String?
    var medium: String?
    var dimensions: String?
    var classification: String?
    var department: String?
    var creditLine: String?
    var accessionNumber: String?
    var objectURL: String?
    var primaryImage: String?
    var primaryImageSmall: String?
    var additionalImages: [String]?
    var measurements: [Measurement]?

    /// One element of `measurements`: lengths in centimetres (docs/MET-API.md §3.3).
    struct Measurement: Decodable {
        var elementName: String?
        var elementMeasurements: [String: Double]?
    }

    private enum CodingKeys: String, CodingKey {
        case objectID, title, objectName, artistDisplayName, artistDisplayBio, objectDate, culture, period, medium
        case dimensions, classification, department, creditLine, accessionNumber, objectURL, primaryImage
        case primaryImageSmall, additionalImages, measurements
    }

    init(from decoder: any Decoder) throws {
        let record = try decoder.container(keyedBy: CodingKeys.self)
        func text(_ key: CodingKeys) -> String? { (try? record.decodeIfPresent(String.self, forKey: key)) ?? nil }
        objectID = (try? record.decodeIfPresent(Int.self, forKey: .objectID)) ?? nil
        title = text(.title)
        objectName = text(.objectName)
        artistDisplayName = text(.artistDisplayName)
        artistDisplayBio = text(.artistDisplayBio)
        objectDate = text(.objectDate)
        culture = text(.culture)
        period = text(.period)
        medium = text(.medium)
        dimensions = text(.dimensions)
        classification = text(.classification)
        department = text(.department)
        creditLine = text(.creditLine)
        accessionNumber = text(.accessionNumber)
        objectURL = text(.objectURL)
        primaryImage = text(.primaryImage)
        primaryImageSmall = text(.primaryImageSmall)
        additionalImages = (try? record.decodeIfPresent([String].self, forKey: .additionalImages)) ?? nil
        measurements = (try? record.decodeIfPresent([Measurement].self, forKey: .measurements)) ?? nil
    }

    /// The record in `body`, or an empty one when the body is not a JSON object.
    static func read(_ body: [UInt8]) -> IIIFRecord {
        (try? JSONDecoder().decode(IIIFRecord.self, from: Data(body))) ?? IIIFRecord()
    }

    private init() {}

    /// The width over the height of the work, in centimetres, from the first element of
    /// `measurements` with both (preferring `Overall`, then `Sheet`, then `Image`, the elements a
    /// photograph of the work most often shows), or nil when none has both.
    var aspectRatio: Double? {
        let sized = (measurements ?? []).compactMap { element -> (String, Double)? in
            guard let sizes = element.elementMeasurements, let width = sizes["Width"], let height = sizes["Height"],
                width > 0, height > 0, width.isFinite, height.isFinite
            else { return nil }
            return (element.elementName ?? "", width / height)
        }
        for name in ["Overall", "Sheet", "Image"] {
            if let match = sized.first(where: { $0.0 == name }) { return match.1 }
        }
        return sized.first?.1
    }
}
