import Foundation
import MetCore
import MetEngine
import TestKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP exchange's result.
struct HTTPResult: Sendable {
    let status: Int
    let headers: [String: String]
    let body: Data

    /// A header by case-insensitive name.
    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The body parsed as a JSON object (fails the test if it is not one).
    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw ProcessFailure("not a JSON object: \(String(decoding: body, as: UTF8.self).prefix(200))")
        }
        return object
    }
}

/// A real HTTP client for integration tests (URLSession, no cache, no cookies, many connections).
enum HTTPClient {
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 128
        configuration.timeoutIntervalForRequest = 30
        configuration.httpShouldSetCookies = false
        return URLSession(configuration: configuration)
    }()

    static func request(
        _ url: String, method: String = "GET", headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let key = key as? String, let value = value as? String { fields[key] = value }
        }
        return HTTPResult(status: http.statusCode, headers: fields, body: data)
    }
}
