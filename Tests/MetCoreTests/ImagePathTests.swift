import Testing

@testable import MetCore
@testable import MetEngine

/// `ImagePath.parse`, part by part: the shapes of the image host's pictures, and for anything else
/// the one reason a client is told (the first rule the path breaks).
@Suite("The image host's path shapes")
struct ImagePathTests {
    @Test(arguments: [
        "CRDImages/ep/web-large/DT1567.jpg",
        "CRDImages/ep/original/DT1567.jpg",
        "CRDImages/dp/original/DP-12345-001.JPG",
        "CRDImages/abcdefgh/web-large/a.tiff",
        "CRDImages/as/original/x_y-z.1.WebP",
        "CRDImages/ad/web-large/" + String(repeating: "a", count: 196) + ".png",
    ])
    func theHostsShapesAreAccepted(rest: String) throws {
        #expect(try ImagePath.parse(rest).path == "/" + rest)
    }

    static let shape = "expected CRDImages/{department code}/{original|web-large}/{file}"
    static let code = "the department code must be 2 to 8 lower-case letters"
    static let rendition = "the rendition must be original or web-large"
    static let file = "the file name must be 1 to 200 letters, digits, '.', '_' or '-'"
    static let picture = "the file must be a .jpg, .jpeg, .png, .tif, .tiff or .webp picture"

    @Test(arguments: [
        ("", shape),
        ("CRDImages", shape),
        ("CRDImages/ep/web-large", shape),
        ("CRDImages/ep/web-large/a/b.jpg", shape),
        ("crdimages/ep/web-large/DT1567.jpg", shape),
        ("CRDImagesX/ep/web-large/DT1567.jpg", shape),
        ("/CRDImages/ep/web-large/DT1567.jpg", shape),
        ("CRDImages/e/web-large/DT1567.jpg", code),
        ("CRDImages/abcdefghi/web-large/DT1567.jpg", code),
        ("CRDImages/EP/web-large/DT1567.jpg", code),
        ("CRDImages/../web-large/DT1567.jpg", code),
        ("CRDImages/ep/web-small/DT1567.jpg", rendition),
        ("CRDImages/ep/Original/DT1567.jpg", rendition),
        ("CRDImages/ep/web-large/", file),
        ("CRDImages/ep/web-large/.jpg", file),
        ("CRDImages/ep/web-large/DT 1567.jpg", file),
        ("CRDImages/ep/web-large/DT%2F1567.jpg", file),
        ("CRDImages/ep/web-large/" + String(repeating: "a", count: 197) + ".png", file),
        ("CRDImages/ep/web-large/DT1567.gif", picture),
        ("CRDImages/ep/web-large/DT1567", picture),
    ])
    func everythingElseIsRefusedWithItsReason(rest: String, reason: String) {
        do {
            let path = try ImagePath.parse(rest)
            Issue.record("\(rest) was accepted as \(path.path)")
        } catch {
            #expect(error.code == "invalid_image_path")
            #expect(error.detail == "/images/\(rest.prefix(200)) is not a path of the Met's image host: \(reason).")
        }
    }
}
