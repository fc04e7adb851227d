import MetEngine
import Testing

@testable import MetRedis

@Suite struct SharedNoticeTests {
    @Test(arguments: [
        SharedNotice.fill(key: "/objects/1", outcome: .stored),
        .fill(key: "search?q=a\nb", outcome: .abandoned),
        .fill(key: "k", outcome: .failed(.timeout)),
        .fill(key: "k", outcome: .failed(.blocked)),
        .fill(key: "k", outcome: .failed(.status(502))),
        .purge(key: "/objects/1\nfill\nstored"),
        .expire(key: "/public/collection/v1/objects/1"), .expire(key: "search?q=a\npurge\nb"),
        .block(seconds: 42.25, budget: ""), .block(seconds: 3, budget: "images"),
    ])
    func roundTrips(_ notice: SharedNotice) {
        #expect(SharedNotice(payload: notice.payload) == notice)
    }

    @Test func keepsTheKindOfAFailureButNotItsReason() {
        let notice = SharedNotice.fill(key: "k", outcome: .failed(.unreachable("refused")))
        guard case .fill(_, .failed(.unreachable)) = SharedNotice(payload: notice.payload) else {
            Issue.record("an unreachable failure did not round-trip")
            return
        }
    }

    @Test(arguments: [
        "", "fill", "fill\nstored", "fill\nmaybe\nk", "purge\n", "expire", "expire\n", "pause\nsoon", "pause\n-1",
        "pause\n0", "pause\ninf",
        "pause\nnan", "pause\n3\n", "hello\nk",
        // An earlier version's block, a time on the sender's clock: never adopted as such.
        "block\n1800000000.25",
    ])
    func ignoresWhatItDoesNotRead(_ text: String) {
        #expect(SharedNotice(payload: Array(text.utf8)) == nil)
    }
}
