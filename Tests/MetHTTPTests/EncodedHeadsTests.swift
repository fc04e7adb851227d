import HTTPGrammar
import HTTPWire
import Testing

@testable import MetEngine
@testable import MetHTTP

/// `EncodedHeads`: the head of a shared response is encoded once per second for each way it is
/// sent (HTTP minor version, HEAD or not, closing or not) and then reused, always the bytes
/// `ResponseEncoder.encode` makes for those arguments. Reuse is told apart from re-encoding by the
/// `Date` line: a later call in the same second passes another one, which a reused head does not
/// show. Beyond `capacity` responses in a second, heads are still right, encoded per call.
@Suite("Encoded heads of shared responses")
struct EncodedHeadsTests {
    /// One way of sending a response.
    struct Way: Sendable, CustomTestStringConvertible {
        var minorVersion = 1
        var isHead = false
        var close = false

        var testDescription: String { "HTTP/1.\(minorVersion)\(isHead ? " HEAD" : "")\(close ? " close" : "")" }
    }

    private static let second = 1_750_000_000

    /// The `Date` line of `second`.
    private static func date(_ second: Int) -> [UInt8] { HTTPDate.fieldLine(second) }

    /// A response shared as its own `SharedResponse`, told apart from others by `index`.
    private static func sharedResponse(_ index: Int = 0) -> Response {
        var response = Response(
            status: 200, headers: ["Content-Type": Response.jsonContentType, "ETag": "\"v\(index)\""],
            body: Array("{\"objectID\":\(index)}".utf8), cacheOutcome: .hit)
        response.shared = SharedResponse()
        return response
    }

    /// What `ResponseEncoder` makes of `response` sent `way` with `date`.
    private static func encoded(_ response: Response, _ way: Way, date: [UInt8]) -> [UInt8] {
        ResponseEncoder.encode(
            response, isHead: way.isHead, minorVersion: way.minorVersion, close: way.close, date: date
        ).head
    }

    private static func head(
        _ heads: inout EncodedHeads, _ response: Response, _ way: Way = Way(), second: Int, date: [UInt8]
    ) -> [UInt8] {
        heads.head(
            of: response, shared: response.shared!, isHead: way.isHead, minorVersion: way.minorVersion,
            close: way.close, second: second, date: date)
    }

    @Test func theSameResponseInTheSameSecondGetsTheHeadEncodedTheFirstTime() {
        var heads = EncodedHeads()
        let response = Self.sharedResponse()
        let first = Self.head(&heads, response, second: Self.second, date: Self.date(Self.second))
        #expect(first == Self.encoded(response, Way(), date: Self.date(Self.second)))
        // Another Date line in the same second: the head kept is returned, not a new one.
        let again = Self.head(&heads, response, second: Self.second, date: Self.date(Self.second + 7))
        #expect(again == first)
        let text = String(decoding: again, as: UTF8.self)
        #expect(text.contains(String(decoding: Self.date(Self.second), as: UTF8.self)))
        #expect(!text.contains(String(decoding: Self.date(Self.second + 7), as: UTF8.self)))
    }

    @Test func aNewSecondEncodesTheHeadAfreshWithItsDate() {
        var heads = EncodedHeads()
        let response = Self.sharedResponse()
        let first = Self.head(&heads, response, second: Self.second, date: Self.date(Self.second))
        let next = Self.head(&heads, response, second: Self.second + 1, date: Self.date(Self.second + 1))
        #expect(next != first)
        #expect(next == Self.encoded(response, Way(), date: Self.date(Self.second + 1)))
        // And that one is kept for its second in turn.
        let again = Self.head(&heads, response, second: Self.second + 1, date: Self.date(Self.second + 9))
        #expect(again == next)
    }

    @Test(arguments: [
        Way(minorVersion: 0), Way(isHead: true), Way(close: true), Way(minorVersion: 0, isHead: true, close: true),
    ])
    func eachWayOfSendingGetsAHeadOfItsOwn(way: Way) {
        var heads = EncodedHeads()
        let response = Self.sharedResponse()
        let base = Self.head(&heads, response, second: Self.second, date: Self.date(Self.second))
        // The same response and second, another way: not the head kept for the first way (whose
        // Date line would show), but the encoder's for this way, with the Date passed now.
        let other = Self.head(&heads, response, way, second: Self.second, date: Self.date(Self.second + 1))
        #expect(other == Self.encoded(response, way, date: Self.date(Self.second + 1)))
        // Each is kept for its own way.
        #expect(Self.head(&heads, response, way, second: Self.second, date: Self.date(Self.second + 2)) == other)
        #expect(Self.head(&heads, response, second: Self.second, date: Self.date(Self.second + 2)) == base)
    }

    @Test func distinctSharedResponsesAreEncodedEachForItself() {
        var heads = EncodedHeads()
        // Equal bytes, distinct identities: each has its own head, not the other's.
        let one = Self.sharedResponse(1)
        let other = Self.sharedResponse(1)
        let first = Self.head(&heads, one, second: Self.second, date: Self.date(Self.second))
        let second = Self.head(&heads, other, second: Self.second, date: Self.date(Self.second + 1))
        #expect(first == Self.encoded(one, Way(), date: Self.date(Self.second)))
        #expect(second == Self.encoded(other, Way(), date: Self.date(Self.second + 1)))
    }

    @Test func aResponseMadeAfterAnotherWentAwayNeverGetsItsHead() {
        var heads = EncodedHeads()
        // Each response is dropped as soon as its head is made: were its identity not held, the
        // next one could be allocated at the same address and be handed the previous head.
        for index in 0..<200 {
            let response = Self.sharedResponse(index)
            let head = Self.head(&heads, response, second: Self.second, date: Self.date(Self.second))
            #expect(head == Self.encoded(response, Way(), date: Self.date(Self.second)))
        }
    }

    @Test func beyondTheCapacityHeadsAreEncodedPerResponseAndStillRight() {
        var heads = EncodedHeads()
        let responses = (0..<(EncodedHeads.capacity + 20)).map { Self.sharedResponse($0) }
        let firstDate = Self.date(Self.second)
        for response in responses {
            #expect(
                Self.head(&heads, response, second: Self.second, date: firstDate)
                    == Self.encoded(response, Way(), date: firstDate))
        }
        // Again in the same second, with another Date line: the first `capacity` heads were
        // kept; the rest are made again, each for its own response.
        let laterDate = Self.date(Self.second + 5)
        var kept = 0
        var madeAgain = 0
        for response in responses {
            let head = Self.head(&heads, response, second: Self.second, date: laterDate)
            if head == Self.encoded(response, Way(), date: firstDate) {
                kept += 1
            } else if head == Self.encoded(response, Way(), date: laterDate) {
                madeAgain += 1
            }
        }
        #expect(kept == EncodedHeads.capacity)
        #expect(madeAgain == 20)
        #expect(kept + madeAgain == responses.count)
    }
}
