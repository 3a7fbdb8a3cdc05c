// Every operation the dashboard sends. GraphQL Code Generator types them (src/gql/) and writes them into
// the trusted-documents manifest: the page sends each one's hash only, and the gateway runs the
// document it loaded for that hash.
import { graphql } from './gql';

/** The key's websites for the switcher, oldest first, filtered by the search box. */
export const WebsitesQuery = graphql(`
  query Websites($search: String) {
    websites(search: $search, perPage: 25, sortBy: CREATED_AT, sort: ASC) {
      totalCount
      nodes {
        id
        domain
      }
    }
  }
`);

/** The totals against the previous period, and the visitors and pageviews of each day. */
export const OverviewQuery = graphql(`
  query Overview($id: ID!, $period: Period, $from: Date, $to: Date) {
    website(id: $id) {
      id
      domain
      summary(period: $period, from: $from, to: $to, compare: PREVIOUS_PERIOD) {
        current {
          visitors
          pageviews
          range {
            from
            to
          }
        }
        previous {
          visitors
          pageviews
          range {
            from
            to
          }
        }
        visitorsChange
        pageviewsChange
      }
      visitors: series(metric: VISITORS, period: $period, from: $from, to: $to) {
        points {
          date
          count
        }
      }
      pageviews: series(metric: PAGEVIEWS, period: $period, from: $from, to: $to) {
        points {
          date
          count
        }
      }
    }
  }
`);

/** The previous period's days, once the overview has said which days those are. */
export const PreviousSeriesQuery = graphql(`
  query PreviousSeries($id: ID!, $from: Date!, $to: Date!) {
    website(id: $id) {
      id
      visitors: series(metric: VISITORS, from: $from, to: $to) {
        points {
          date
          count
        }
      }
      pageviews: series(metric: PAGEVIEWS, from: $from, to: $to) {
        points {
          date
          count
        }
      }
    }
  }
`);

/** One page of a statistic: top pages, referrers, countries or browsers. */
export const TopQuery = graphql(`
  query Top($id: ID!, $name: StatName!, $period: Period, $from: Date, $to: Date, $page: Int!) {
    website(id: $id) {
      id
      stats(name: $name, period: $period, from: $from, to: $to, page: $page, perPage: 10) {
        totalCount
        nodes {
          value
          label
          count
        }
        pageInfo {
          page
          hasNextPage
        }
      }
    }
  }
`);

/** Today's figures, pushed again whenever they change. */
export const LiveSubscription = graphql(`
  subscription Live($id: ID!) {
    website(id: $id) {
      id
      today: summary(period: TODAY) {
        current {
          visitors
          pageviews
        }
      }
      pages: stats(name: PAGE, period: TODAY, perPage: 10) {
        nodes {
          value
          count
        }
      }
    }
  }
`);
