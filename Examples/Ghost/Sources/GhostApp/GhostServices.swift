/// Where the user is. Declared here, in the app's interface, so modules depend on it and not on each other.
public protocol LocationService: Sendable {
    /// The city the app shows by default.
    var city: String { get }
}

/// Forecasts by city.
public protocol ForecastService: Sendable {
    /// A one-line forecast for `city`.
    func headline(for city: String) -> String
}

/// The location a fresh install assumes.
struct FixedLocation: LocationService {
    let city = "Chicago"
}

/// Forecasts from bundled sample data; a network implementation can replace it with a higher rank.
struct SampleForecasts: ForecastService {
    let location: any LocationService
    private let samples = ["Chicago": "Windy, 12°C", "Lisbon": "Sunny, 21°C", "Oslo": "Snow, -3°C"]

    func headline(for city: String) -> String {
        "\(city): \(samples[city] ?? "no forecast")"
    }
}
